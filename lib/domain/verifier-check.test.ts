import { describe, expect, it } from "vitest";
import { classify, type StageFact } from "./classify";
import { deriveOperation, type StoredStage } from "./operation";
import { REASONS } from "./outcomes";
import { verdictHistory } from "./verdict-history";
import { judgeResponse, pointerAt, responseExcerpt, verifierReadPayload, verifierChecksDone } from "./verifier-check";
import { expectedValue, maskSecrets, operationContext, renderRequest, TemplateError, templateProblem } from "./verifier-template";
import { EXAMPLE } from "./fixtures/verifier-example";
import type { CanonicalRead } from "./wire";

const ctx = operationContext("op-1", [
  { stage: "intent", seq: 1, data: { params: { text: "hello world", count: 3, tags: ["a", "b"] } }, envelope: { tool: { name: "social.publish" }, trajectory_id: "run-1" } },
  { stage: "receipt", seq: 2, data: { status: "accepted", receipt_id: "r/42?x", observed_at: "2026-08-28T10:00:00Z" }, envelope: null },
]);
const env = (name: string) => ({ X_READ_TOKEN: "s3cr3t-token" })[name as "X_READ_TOKEN"];

describe("templates", () => {
  it("fill from the recorded stages and the envelope; values in a URL are percent-encoded", () => {
    const r = renderRequest(
      { method: "GET", url: "https://api.example.com/{receipt.receipt_id}/{tool.name}?t={intent.params.tags.1}&op={operation_id}", headers: { "X-Run": "{trajectory_id}" } },
      ctx,
      env,
    );
    expect(r.send.url).toBe("https://api.example.com/r%2F42%3Fx/social.publish?t=b&op=op-1");
    expect(r.send.headers).toEqual({ "X-Run": "run-1" });
  });

  it("secrets are sent, but shown as {env.NAME}; anything echoing one is masked", () => {
    const r = renderRequest(EXAMPLE.request, ctx, env);
    expect(r.send.headers.Authorization).toBe("Bearer s3cr3t-token");
    expect(r.shown.headers.Authorization).toBe("Bearer {env.X_READ_TOKEN}");
    expect(JSON.stringify(r.shown)).not.toContain("s3cr3t");
    expect(maskSecrets("got Bearer s3cr3t-token back, s3cr3t-token", r.secrets)).toBe("got Bearer ••• back, •••");
    expect(responseExcerpt(Buffer.from('{"echo":"s3cr3t-token"}'), r.secrets).text).toBe('{"echo":"•••"}');
  });

  it("a stored secret is read from its own source, shown as {secret.NAME} and masked like any other", () => {
    const source = (name: string, kind?: "env" | "secret") => (kind === "secret" ? ({ SOCIAL_TOKEN: "st0red-value" } as Record<string, string>)[name] : env(name));
    const r = renderRequest({ method: "POST", url: "https://h/{secret.SOCIAL_TOKEN}", headers: { Authorization: "Bearer {secret.SOCIAL_TOKEN}", "X-Read": "{env.X_READ_TOKEN}" }, body: "t={secret.SOCIAL_TOKEN}" }, ctx, source);
    expect(r.send).toEqual({ method: "POST", url: "https://h/st0red-value", headers: { Authorization: "Bearer st0red-value", "X-Read": "s3cr3t-token" }, body: "t=st0red-value" });
    expect(r.shown).toEqual({ method: "POST", url: "https://h/{secret.SOCIAL_TOKEN}", headers: { Authorization: "Bearer {secret.SOCIAL_TOKEN}", "X-Read": "{env.X_READ_TOKEN}" }, body: "t={secret.SOCIAL_TOKEN}" });
    expect(maskSecrets("echo st0red-value", r.secrets)).toBe("echo •••");
    expect(() => renderRequest({ method: "GET", url: "https://h/", headers: { Authorization: "{secret.GONE}" } }, ctx, source)).toThrow(
      new TemplateError("no secret named GONE is stored on this server ({secret.GONE}; an admin adds it under Verifiers, Secrets)"),
    );
  });

  it("a value the operation lacks, or a secret not set, is a clear error", () => {
    expect(() => renderRequest({ method: "GET", url: "https://h/{receipt.nope}" }, ctx, env)).toThrow(new TemplateError("the operation has no value for {receipt.nope}"));
    expect(() => renderRequest(EXAMPLE.request, ctx, () => undefined)).toThrow(/the environment variable X_READ_TOKEN is not set on this server/);
    expect(() => renderRequest({ method: "GET", url: "https://h/", headers: { "X-A": "{intent.params.text}\r\nX-B: 1" } }, { ...ctx, intent: { params: { text: "a\r\nb" } } }, env)).toThrow(/line break/);
  });

  it("an expected value that is one placeholder keeps its JSON type", () => {
    expect(expectedValue("{intent.params.count}", ctx)).toBe(3);
    expect(expectedValue("n={intent.params.count}", ctx)).toBe("n=3");
    expect(expectedValue({ a: 1 }, ctx)).toEqual({ a: 1 });
    expect(templateProblem("{intent.params.text}")).toBeNull();
  });
});

describe("judging an answer", () => {
  const body = (o: unknown) => Buffer.from(JSON.stringify(o));
  it("rules in order: 404 absent; 200 with the intended text a match with evidence; another 200 a mismatch", () => {
    expect(judgeResponse(EXAMPLE, ctx, { status: 404, body: "" })).toEqual({ status: "absent", rule: 0, evidence: null, error: null });
    expect(judgeResponse(EXAMPLE, ctx, { status: 200, body: body({ data: { id: 99, text: "hello world" } }) })).toEqual({
      status: "match",
      rule: 1,
      evidence: { object_id: "99" },
      error: null,
    });
    expect(judgeResponse(EXAMPLE, ctx, { status: 200, body: body({ data: { id: 99, text: "hello" } }) })).toMatchObject({ status: "mismatch", rule: 2 });
    expect(judgeResponse(EXAMPLE, ctx, { status: 200, body: "<html>" })).toMatchObject({ status: "mismatch", rule: 2 });
  });

  it("no rule matching is an unavailable read naming the status", () => {
    expect(judgeResponse(EXAMPLE, ctx, { status: 503, body: "" })).toEqual({ status: "unavailable", rule: null, evidence: null, error: "no expect rule matched the answer (HTTP 503)" });
  });

  it("a comparison with a value the operation lacks cannot be judged: unavailable, saying why", () => {
    const noText = operationContext("op-2", [{ stage: "intent", seq: 1, data: { params: {} }, envelope: null }]);
    expect(judgeResponse(EXAMPLE, noText, { status: 200, body: body({ data: { text: "x" } }) })).toMatchObject({
      status: "unavailable",
      error: "rule 2 cannot be judged: the operation has no value for {intent.params.text} to compare with",
    });
  });

  it("JSON pointers follow RFC 6901: escapes, array indices, own members only", () => {
    const doc = JSON.parse('{"a/b":{"m~n":[10,20]},"o":{}}');
    expect(pointerAt(doc, "/a~1b/m~0n/1")).toBe(20);
    expect(pointerAt(doc, "/a~1b/m~0n/5")).toBeUndefined();
    expect(pointerAt(doc, "/o/constructor")).toBeUndefined();
    expect(pointerAt(doc, "/o/toString")).toBeUndefined();
    expect(pointerAt(doc, "/x/y")).toBeUndefined();
    expect(pointerAt(doc, "")).toBe(doc);
  });
});

describe("the observation window", () => {
  const RECEIPT_AT = "2026-08-28T10:00:00Z";
  const CLOSES = "2026-08-28T10:10:00.000Z";
  let seq = 0;
  const stage = (s: StoredStage["stage"], data: unknown, sent_by: StoredStage["sent_by"] = null): StoredStage => ({
    seq: ++seq,
    stage: s,
    observed_at: null,
    recorded_at: "2026-08-28T10:00:00Z",
    data,
    envelope: null,
    sent_by,
  });
  const verifier = { via: "system", name: "verifier:x-post-exists@1" };
  const vread = (status: CanonicalRead["status"], at: string, evidence: Record<string, string> | null = null) =>
    verifierReadPayload({
      status,
      observedAt: at,
      evidence,
      info: { name: "x-post-exists", version: 1, check: 1, of: 4, request: { method: "GET", url: "https://x", headers: {} }, http_status: 404, rule: 0, window_closes_at: CLOSES },
    });
  const base = () => [stage("intent", { params: { text: "hi" } }), stage("receipt", { status: "accepted", observed_at: RECEIPT_AT })];
  const outcome = (stages: StoredStage[]) => {
    const c = deriveOperation("op", stages).classification;
    return [c.outcome, c.reason, c.failure_category];
  };

  it("a verifier's absent read inside the window leaves the operation uncertain, 'observation window open'", () => {
    expect(REASONS.windowOpen).toBe("observation window open");
    expect(outcome([...base(), stage("canonical_read", vread("absent", "2026-08-28T10:00:05Z"), verifier)])).toEqual(["uncertain", "observation window open", 5]);
  });

  it("a match ends it early", () => {
    const stages = [...base(), stage("canonical_read", vread("absent", "2026-08-28T10:00:05Z"), verifier), stage("canonical_read", vread("match", "2026-08-28T10:00:30Z", { object_id: "p-1" }), verifier)];
    expect(outcome(stages)).toEqual(["verified", REASONS.verified, null]);
  });

  it("after the window the latest read decides by the ordinary rules", () => {
    const inside = stage("canonical_read", vread("absent", "2026-08-28T10:02:00Z"), verifier);
    expect(outcome([...base(), inside, stage("canonical_read", vread("absent", CLOSES), verifier)])).toEqual(["divergent", REASONS.absent, 4]);
    expect(outcome([...base(), inside, stage("canonical_read", vread("unavailable", "2026-08-28T10:10:01Z"), verifier)])).toEqual(["uncertain", REASONS.readUnavailable, 5]);
  });

  it("only a verifier's own reads carry a window: the same payload from anyone else is an ordinary absent read", () => {
    const forged = stage("canonical_read", vread("absent", "2026-08-28T10:00:05Z"), { via: "token", name: undefined });
    expect(outcome([...base(), forged])).toEqual(["divergent", REASONS.absent, 4]);
    const systemButNotVerifier = stage("canonical_read", vread("absent", "2026-08-28T10:00:05Z"), { via: "system", name: "demo" });
    expect(outcome([...base(), systemButNotVerifier])).toEqual(["divergent", REASONS.absent, 4]);
  });

  it("a later absent read from someone else inside the window decides as usual; mismatch is never held back", () => {
    const other = stage("canonical_read", { status: "absent", observed_at: "2026-08-28T10:01:00Z" }, { via: "token" });
    expect(outcome([...base(), stage("canonical_read", vread("absent", "2026-08-28T10:00:05Z"), verifier), other])).toEqual(["divergent", REASONS.absent, 4]);
    expect(outcome([...base(), stage("canonical_read", vread("mismatch", "2026-08-28T10:00:05Z"), verifier)])).toEqual(["divergent", REASONS.mismatch, 4]);
  });

  it("the verdict history holds the verdict back the same way (never divergent inside the window)", () => {
    const stages = [...base(), stage("canonical_read", vread("absent", "2026-08-28T10:00:05Z"), verifier), stage("canonical_read", vread("match", "2026-08-28T10:00:30Z", { object_id: "p-1" }), verifier)];
    expect(verdictHistory(stages, []).map((h) => h.reason)).toEqual([REASONS.noReceipt, REASONS.readUnavailable, REASONS.windowOpen, REASONS.verified]);
  });

  it("a verifier's match whose rule takes a fingerprint must show one, even when the intent names none; from anyone else the flag means nothing", () => {
    const fpRead = (evidence: Record<string, string>) =>
      verifierReadPayload({
        status: "match",
        observedAt: "2026-08-28T10:00:30Z",
        evidence,
        info: { name: "x-post-exists", version: 1, check: 1, of: 4, request: { method: "GET", url: "https://x", headers: {} }, http_status: 200, rule: 1, window_closes_at: CLOSES, fingerprint_expected: true },
      });
    expect(outcome([...base(), stage("canonical_read", fpRead({ object_id: "p-1" }), verifier)])).toEqual(["uncertain", REASONS.fingerprintMissing, 5]);
    expect(outcome([...base(), stage("canonical_read", fpRead({ object_id: "p-1", fingerprint: "sha256:x" }), verifier)])).toEqual(["verified", REASONS.verified, null]);
    expect(outcome([...base(), stage("canonical_read", fpRead({ object_id: "p-1" }), { via: "token" })])).toEqual(["verified", REASONS.verified, null]);
    const history = verdictHistory([...base(), stage("canonical_read", fpRead({ object_id: "p-1" }), verifier)], []);
    expect(history.at(-1)?.reason).toBe(REASONS.fingerprintMissing);
  });

  it("classify itself: the window is a fact of the read, not of the payload", () => {
    const facts: StageFact[] = [
      { stage: "receipt", seq: 1, payload: { status: "accepted", observed_at: RECEIPT_AT } },
      { stage: "canonical_read", seq: 2, payload: { status: "absent", observed_at: "2026-08-28T10:00:05Z" }, window_closes_at: CLOSES },
    ];
    expect(classify({ stages: facts }).reason).toBe(REASONS.windowOpen);
    expect(classify({ stages: [facts[0], { ...facts[1], window_closes_at: "not a time" } as StageFact] }).reason).toBe(REASONS.absent);
  });
});

describe("whether a verifier has anything left to read (the long poll's end)", () => {
  const read = (name: string, check: number | null, of: number | null) => ({ data: { status: "unavailable", verifier: { name, check, of } }, sent_by: { via: "system", name: `verifier:${name}@1` } });
  it("done once every verifier that read has made its last check; not while none has read", () => {
    expect(verifierChecksDone([])).toBe(false);
    expect(verifierChecksDone([read("a", 1, 3)])).toBe(false);
    expect(verifierChecksDone([read("a", 1, 3), read("a", 3, 3)])).toBe(true);
    expect(verifierChecksDone([read("a", 1, 1)])).toBe(true);
    expect(verifierChecksDone([read("a", 1, 1), read("b", 1, 2)])).toBe(false);
  });
  it("reads sent by others (an agent, a reviewer) and dry runs (no check) are not a verifier's schedule", () => {
    expect(verifierChecksDone([{ data: { status: "match" }, sent_by: { via: "token", name: "agent" } }])).toBe(false);
    expect(verifierChecksDone([read("a", null, null)])).toBe(false);
  });
});
