import { describe, expect, it } from "vitest";
import { Reconcile } from "./src/index";

type Seen = { method: string; url: string; body: unknown; auth: string | null };

/** A Reconcile whose fetch answers from `reply` and remembers each request. */
function client(reply: (url: string) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const rc = new Reconcile({
    url: "https://rc.example/",
    token: "tok",
    fetch: async (input, init) => {
      const url = String(input);
      seen.push({ method: init?.method ?? "GET", url, body: init?.body ? JSON.parse(String(init.body)) : undefined, auth: new Headers(init?.headers).get("authorization") });
      return reply(url);
    },
  });
  return { rc, seen };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const pending = { status: "pending", rule: "billing.charge", requested_at: "2025-01-01T00:00:00Z", expires_at: "2025-01-01T01:00:00Z" };

describe("approval(): a held call's approval, typed", () => {
  it("reads GET /api/v1/operations/{id}/approval with the wait in whole seconds (0–30), the id escaped", async () => {
    const { rc, seen } = client(() => json(200, pending));
    expect(await rc.approval("op:1&é", { waitSeconds: 4.6 })).toEqual({ kind: "found", approval: pending });
    await rc.approval("op", { waitSeconds: 99 });
    await rc.approval("op");
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "GET https://rc.example/api/v1/operations/op%3A1%26%C3%A9/approval?wait=5",
      "GET https://rc.example/api/v1/operations/op/approval?wait=30",
      "GET https://rc.example/api/v1/operations/op/approval",
    ]);
    expect(seen[0].auth).toBe("Bearer tok");
  });

  it("the server's refusals are answers with the status, code and message; a 5xx too (the caller decides to ask again)", async () => {
    const { rc } = client((url) => (url.includes("gone") ? json(404, { error: { code: "not_found", message: "not held" } }) : new Response("<html>", { status: 503 })));
    expect(await rc.approval("gone")).toEqual({ kind: "refused", status: 404, code: "not_found", message: "not held" });
    expect(await rc.approval("busy")).toEqual({ kind: "refused", status: 503, code: "http_503", message: "HTTP 503" });
  });

  it("no answer is unreachable, never a throw; an abort too", async () => {
    const { rc } = client(() => Promise.reject(new TypeError("fetch failed")));
    expect(await rc.approval("op")).toEqual({ kind: "unreachable", error: "fetch failed" });
    // Like fetch: nothing comes back until the request's signal aborts it.
    let signal: AbortSignal | undefined;
    const hang = { rc: new Reconcile({ url: "https://rc.example", token: "tok", fetch: (_i, init) => new Promise<Response>((_r, reject) => { signal = init?.signal ?? undefined; signal?.addEventListener("abort", () => reject(signal!.reason)); }) }) };
    const abort = new AbortController();
    const answer = hang.rc.approval("op", { waitSeconds: 30, signal: abort.signal });
    abort.abort(new Error("the client cancelled"));
    expect(await answer).toEqual({ kind: "unreachable", error: "the client cancelled" });
  });

  it("an id that cannot name an operation is refused unsent: `..` would read another path", async () => {
    const { rc, seen } = client(() => json(200, pending));
    for (const id of ["..", "a/b", "", "x?y"]) expect(await rc.approval(id)).toMatchObject({ kind: "refused", status: 422, code: "invalid_operation_id" });
    expect(seen).toEqual([]);
  });
});

describe("useApproval(): taking an approved call, once", () => {
  it("POSTs the digest (and rule version) to /approval/use; 201 is found", async () => {
    const approved = { ...pending, status: "approved", used_by: "gw" };
    const { rc, seen } = client(() => json(201, approved));
    expect(await rc.useApproval("op+1", { params_digest: "sha256:ab", rule_version: "v1" })).toEqual({ kind: "found", approval: approved });
    await rc.useApproval("op", { params_digest: "sha256:cd" });
    expect(seen).toEqual([
      { method: "POST", url: "https://rc.example/api/v1/operations/op%2B1/approval/use", body: { params_digest: "sha256:ab", rule_version: "v1" }, auth: "Bearer tok" },
      { method: "POST", url: "https://rc.example/api/v1/operations/op/approval/use", body: { params_digest: "sha256:cd" }, auth: "Bearer tok" },
    ]);
  });

  it("a second taker is refused with the server's words; a 200 is not a take", async () => {
    const { rc } = client((url) => (url.includes("twice") ? json(409, { error: { code: "conflict", message: "already forwarded" } }) : json(200, pending)));
    expect(await rc.useApproval("twice", { params_digest: "sha256:ab" })).toEqual({ kind: "refused", status: 409, code: "conflict", message: "already forwarded" });
    expect(await rc.useApproval("odd", { params_digest: "sha256:ab" })).toMatchObject({ kind: "refused", status: 200 });
  });

  it("no answer is unreachable; a bad id is refused unsent", async () => {
    const { rc, seen } = client(() => Promise.reject(new Error("ECONNREFUSED")));
    expect(await rc.useApproval("op", { params_digest: "sha256:ab" })).toEqual({ kind: "unreachable", error: "ECONNREFUSED" });
    expect(await rc.useApproval("..", { params_digest: "sha256:ab" })).toMatchObject({ kind: "refused", status: 422 });
    expect(seen).toHaveLength(1);
  });
});
