import { beforeAll, describe, expect, it } from "vitest";
import { manyKeys } from "@/lib/reliability/hostile";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { signInHttp } from "@/lib/testing/sessions";

/**
 * TRUST.md "Pages render such payloads truncated (a show all / download of the raw JSON), with
 * linear diffs": the operation page of an operation whose intent and receipt carry 100,000
 * parameters each renders a preview (first keys, "… N more"), the diff of the one changed
 * parameter, and a download of each stage's whole JSON, which checks the reader's permission.
 */
describe("an operation with 100,000-key params", () => {
  const id = unique("huge-params");
  let cookie: string;
  let owner: { email: string; token: string };
  let intentSeq: number;

  beforeAll(async () => {
    owner = await principal("admin", ["ingest", "verify", "read"]);
    const intent = { target: "crm", effect: "update", params: manyKeys(100_000) };
    const receipt = { status: "accepted", receipt_id: "r-huge", observed_at: "2026-08-28T10:00:00Z", params: manyKeys(100_000, 7) };
    const read = { status: "match", observed_at: "2026-08-28T10:01:00Z", evidence: { object_id: "o-huge", fingerprint: "sha256:x" } };
    const r = await call("/api/v1/receipts", { token: owner.token, body: { records: [{ operation_id: id, intent }, { operation_id: id, receipt, canonical_read: read }] } });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    const op = await call(`/api/v1/operations/${id}`, { token: owner.token });
    intentSeq = op.body.stages.find((s: { stage: string }) => s.stage === "intent").seq;
    cookie = (await signInHttp(owner.email, "integration-password")).cookie!;
    expect(cookie).toBeTruthy();
  });

  it("the page renders the parameters in part, the one difference, and download links", async () => {
    const t0 = performance.now();
    const res = await fetch(`${baseUrl}/operations/${id}`, { headers: { cookie } });
    const html = await res.text();
    console.log(`operation page with 2 × 100,000 params: ${res.status}, ${(html.length / 1024).toFixed(0)} KiB in ${Math.round(performance.now() - t0)} ms`);
    expect(res.status).toBe(200);
    expect(html).toContain("1 parameter differs from the intent.");
    expect(html).toContain("Showing 200 of 100,000 parameters (… 99,800 more)");
    expect(html).toContain("… 99,900 more keys");
    expect(html).toContain(`/api/v1/operations/${id}/stages/${intentSeq}`);
    expect(html).toContain("Show all: download this stage as JSON");
    // The two payloads are 2 MB of JSON: the page carries a preview, not them (before: several copies).
    expect(html.length).toBeLessThan(600_000);
    expect(html).not.toContain("k1000"); // a key far past the preview's first hundred (base-36 names)
  });

  it("the download is the whole stage, for whoever may read operations, and no one else", async () => {
    const path = `/api/v1/operations/${id}/stages/${intentSeq}`;
    const res = await fetch(baseUrl + path, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=".+\.json"$/);
    const intent = (await res.json()) as { params: Record<string, number> };
    expect(Object.keys(intent.params)).toHaveLength(100_000);
    expect((await call(path, { token: owner.token })).status).toBe(200);
    expect((await call(path)).status).toBe(401);
    const noRead = await principal("viewer", ["ingest"]);
    expect((await call(path, { token: noRead.token })).status).toBe(403);
    const other = unique("other-op");
    await call("/api/v1/receipts", { token: owner.token, body: { operation_id: other, intent: { effect: "x" } } });
    expect((await call(`/api/v1/operations/${other}/stages/${intentSeq}`, { token: owner.token })).status).toBe(404);
    expect((await call(`/api/v1/operations/${id}/stages/abc`, { token: owner.token })).status).toBe(404);
  });
});
