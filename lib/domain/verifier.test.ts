import { describe, expect, it } from "vitest";
import { describeRefusal } from "./refusal";
import { EXAMPLE } from "./fixtures/verifier-example";
import { checkSchedule, durationMs, fingerprintRuleProblems, isVerifierSender, ruleExpectsFingerprint, verifierDefinitionSchema, verifierSender, type VerifierDefinition } from "./verifier";

const problems = (d: unknown) => {
  const r = verifierDefinitionSchema.safeParse(d);
  return r.success ? [] : describeRefusal(r.error, { input: d, schema: verifierDefinitionSchema, max: 100 }).message.split("; ");
};
const change = (patch: (d: VerifierDefinition) => void): VerifierDefinition => {
  const d = structuredClone(EXAMPLE);
  patch(d);
  return d;
};

describe("a verifier's definition", () => {
  it("the documented example is valid as it is", () => {
    expect(problems(EXAMPLE)).toEqual([]);
  });

  it("names each problem with its path", () => {
    expect(problems({ ...EXAMPLE, name: "Has Spaces" })[0]).toMatch(/^name must be 1–63 characters/);
    expect(problems({ ...EXAMPLE, colour: "red" })[0]).toMatch(/colour/);
    expect(problems(change((d) => (d.expect = []))).join()).toMatch(/expect needs at least one rule/);
    expect(problems(change((d) => (d.window.checks_at = ["5 seconds"]))).join()).toMatch(/window\.checks_at\[0\] must be a duration/);
    expect(problems(change((d) => (d.window.pending_until = "25h"))).join()).toMatch(/at most 24h/);
    expect(problems(change((d) => (d.expect[0].read = "maybe" as never))).join()).toMatch(/expect\[0\]\.read/);
  });

  it("every check falls inside the window", () => {
    expect(problems(change((d) => (d.window = { checks_at: ["5s", "20m"], pending_until: "10m" })))).toEqual([
      "window.checks_at[1]: 20m is after pending_until (10m): every check falls inside the window",
    ]);
  });

  it("the host is written out and allowed; templates only in the path, query and headers", () => {
    expect(problems(change((d) => (d.request.url = "https://{intent.params.host}/x"))).join()).toMatch(/the host must be written out/);
    expect(problems(change((d) => (d.request.url = "https://evil.example/x"))).join()).toMatch(/host evil\.example is not in allow_hosts \(api\.example\.com\)/);
    expect(problems(change((d) => (d.request.url = "ftp://api.example.com/x"))).join()).toMatch(/must start with https:\/\//);
    expect(problems(change((d) => (d.request.url = "https://user:pw@api.example.com/x"))).join()).toMatch(/credentials/);
    expect(problems(change((d) => (d.allow_hosts = ["https://api.example.com"]))).join()).toMatch(/allow_hosts\[0\] must be a lowercase host name/);
    expect(problems(change((d) => (d.request.url = "http://api.example.com:8080/{operation_id}?q={intent.params.text}")))).toEqual([]);
  });

  it("templates read known places; secrets only from the environment, never the server's own configuration", () => {
    expect(problems(change((d) => (d.request.url = "https://api.example.com/{vault.x}"))).join()).toMatch(/\{vault\.x\}: a template takes values from/);
    expect(problems(change((d) => (d.request.headers = { Authorization: "Bearer {env.AUTH_SECRET}" }))).join()).toMatch(/server's own configuration \(AUTH_SECRET\)/);
    expect(problems(change((d) => (d.request.headers = { "X-Api-Key": "{env.DATABASE_URL}" }))).join()).toMatch(/own configuration/);
    expect(problems(change((d) => (d.request.headers = { Authorization: "Bearer abc123" }))).join()).toMatch(/carries a credential: write it as \{env\.NAME\}/);
    expect(problems(change((d) => (d.request.headers = { Host: "x" }))).join()).toMatch(/set by the HTTP client/);
    expect(problems(change((d) => (d.expect[1].when.json = { "/token": "{env.X_READ_TOKEN}" }))).join()).toMatch(/secrets may be sent, never compared/);
    expect(problems(change((d) => (d.expect[1].when.json = { "data/text": "x" }))).join()).toMatch(/JSON pointer/);
  });

  it("stored secrets: {secret.NAME}, one name; a credential header may carry one; never compared", () => {
    expect(problems(change((d) => (d.request.headers = { Authorization: "Bearer {secret.SOCIAL_TOKEN}" })))).toEqual([]);
    expect(problems(change((d) => (d.request.headers = { Authorization: "Bearer {secret.a.b}" }))).join()).toMatch(/a stored secret is \{secret\.NAME\}, one name/);
    expect(problems(change((d) => (d.request.headers = { Authorization: "Bearer {secret.1x}" }))).join()).toMatch(/a stored secret is \{secret\.NAME\}/);
    expect(problems(change((d) => (d.request.headers = { Authorization: `Bearer {secret.${"a".repeat(65)}}` }))).join()).toMatch(/a stored secret is \{secret\.NAME\}/);
    expect(problems(change((d) => (d.expect[1].when.json = { "/token": "{secret.SOCIAL_TOKEN}" }))).join()).toMatch(/secrets may be sent, never compared/);
  });

  it("durations", () => {
    expect(["200ms", "5s", "2m", "1h", "0s", "5", "1d", "-1s"].map(durationMs)).toEqual([200, 5000, 120_000, 3_600_000, 0, null, null, null]);
  });

  it("a verifier's sender name", () => {
    expect(verifierSender("x-post-exists", 3)).toBe("verifier:x-post-exists@3");
    expect(isVerifierSender("verifier:x-post-exists@3")).toBe(true);
    expect(isVerifierSender("verifier:x@")).toBe(false);
    expect(isVerifierSender("demo")).toBe(false);
  });
});

describe("a match rule without a fingerprint pointer (issue 54)", () => {
  it("is refused, each such rule named, for a tool whose intents carry fingerprints", () => {
    const two = change((d) => d.expect.push({ when: { status: 203 }, read: "match", evidence: { object_id: "/id" } }));
    const r = fingerprintRuleProblems(two, true);
    expect(r.refuse).toBe(true);
    expect(r.problems.map((p) => p.path)).toEqual(["expect[1].evidence.fingerprint", "expect[3].evidence.fingerprint"]);
    expect(r.problems[0].message).toMatch(/^rule 2 reads "match" without a fingerprint pointer, but intents of social\.publish carry fingerprints/);
  });
  it("is a warning when no intent of the tool has carried one yet (it cannot be known at save)", () => {
    const r = fingerprintRuleProblems(EXAMPLE, false);
    expect(r.refuse).toBe(false);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0].message).toMatch(/cannot be known yet/);
  });
  it("a match rule that takes the fingerprint, and rules that read anything else, are fine", () => {
    const withFp = change((d) => (d.expect[1].evidence = { object_id: "/data/id", fingerprint: "/data/sha256" }));
    expect(fingerprintRuleProblems(withFp, true)).toEqual({ refuse: false, problems: [] });
    expect(ruleExpectsFingerprint(withFp, 1)).toBe(true);
    expect(ruleExpectsFingerprint(withFp, 0)).toBe(false);
    expect(ruleExpectsFingerprint(withFp, null)).toBe(false);
    expect(ruleExpectsFingerprint(EXAMPLE, 1)).toBe(false);
  });
});

describe("the schedule of checks", () => {
  const window = { checks_at: ["5s", "30s", "2m"], pending_until: "10m" };
  const R = 1_000_000;

  it("one check per offset after the receipt, and one at the window's end", () => {
    const s = checkSchedule(window, R, R);
    expect(s.closesAt).toBe(R + 600_000);
    expect(s.checks).toEqual([
      { check: 1, of: 4, dueAt: R + 5000, final: false },
      { check: 2, of: 4, dueAt: R + 30_000, final: false },
      { check: 3, of: 4, dueAt: R + 120_000, final: false },
      { check: 4, of: 4, dueAt: R + 600_000, final: true },
    ]);
  });

  it("a check at the window's end is not doubled", () => {
    expect(checkSchedule({ checks_at: ["1s", "10m"], pending_until: "10m" }, R, R).checks.map((c) => c.dueAt)).toEqual([R + 1000, R + 600_000]);
  });

  it("a receipt sent late: the checks already due fold into one now; the window's end is kept", () => {
    const now = R + 60_000; // 5s and 30s have passed
    expect(checkSchedule(window, R, now).checks).toEqual([
      { check: 2, of: 4, dueAt: now, final: false },
      { check: 3, of: 4, dueAt: R + 120_000, final: false },
      { check: 4, of: 4, dueAt: R + 600_000, final: true },
    ]);
    const long = R + 3_600_000; // the whole window has passed: one check, now, which decides
    expect(checkSchedule(window, R, long).checks).toEqual([{ check: 4, of: 4, dueAt: long, final: true }]);
  });
});
