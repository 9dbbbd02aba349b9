/**
 * /api/v1/verifiers on the suite's shared server (which has no allowance for http or private
 * addresses): versions as chained records, validation, disabling, scheduling only for enabled
 * verifiers of the receipt's tool, and a dry run that records nothing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE } from "@/lib/domain/fixtures/verifier-example";
import { call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";

let admin: string;
let agent: string;
beforeAll(async () => {
  admin = (await principal("admin", ["admin", "read"])).token;
  agent = (await principal("reviewer", ["ingest"])).token;
});

const define = (body: unknown) => call("/api/v1/verifiers", { token: admin, body });
const jobsFor = async (operationId: string) => (await db()).job.findMany({ where: { kind: "verifier.check", key: { contains: `:${operationId}:` } } });

describe("verifier versions", () => {
  it("a new name is version 1; the same definition again stores nothing; a change is the next version; disabling is a version too", async () => {
    const name = unique("v").toLowerCase();
    const tool = unique("tool");
    const chain = await chainCount();
    const v1 = await define({ ...EXAMPLE, name, tool });
    expect(v1.status).toBe(201);
    expect(v1.body.verifier).toMatchObject({ name, version: 1, tool, enabled: true, created_by: expect.stringContaining("@") });
    expect(await chainCount()).toBe(chain + 1);
    const again = await define({ ...EXAMPLE, name, tool });
    expect([again.status, again.body.created, again.body.verifier.version]).toEqual([200, false, 1]);
    expect(await chainCount()).toBe(chain + 1);
    const v2 = await define({ ...EXAMPLE, name, tool, window: { checks_at: ["1m"], pending_until: "5m" } });
    expect([v2.status, v2.body.verifier.version]).toEqual([201, 2]);
    const off = await call(`/api/v1/verifiers/${name}`, { token: admin, method: "DELETE" });
    expect(off.body.verifier).toMatchObject({ version: 3, enabled: false });
    const got = await call(`/api/v1/verifiers/${name}`, { token: admin });
    expect(got.body.verifier.version).toBe(3);
    expect(got.body.versions.map((v: { version: number; enabled: boolean }) => [v.version, v.enabled])).toEqual([[3, false], [2, true], [1, true]]);
    // Each version is a chained security record holding the definition.
    const records = await (await db()).chainRecord.findMany({ where: { kind: "security", payload: { contains: `"name":"${name}"` } }, orderBy: { seq: "asc" } });
    expect(records.map((r) => JSON.parse(r.payload)).map((p) => [p.type, p.version, p.enabled])).toEqual([["verifier.version", 1, true], ["verifier.version", 2, true], ["verifier.version", 3, false]]);
    expect(JSON.parse(records[1].payload).definition.window).toEqual({ checks_at: ["1m"], pending_until: "5m" });
    // The list shows the latest version of each.
    const list = await call("/api/v1/verifiers", { token: admin });
    expect(list.body.items.find((v: { name: string }) => v.name === name)).toMatchObject({ version: 3, versions: 3, enabled: false });
    // Rows are never edited.
    await expect((await db()).$executeRawUnsafe("UPDATE verifier_versions SET enabled = true WHERE name = $1".replace("$1", `'${name}'`))).rejects.toThrow(/append-only/);
  });

  it("a refused definition names each problem and stores nothing", async () => {
    const chain = await chainCount();
    const r = await define({ ...EXAMPLE, name: "Bad Name", request: { ...EXAMPLE.request, url: "https://elsewhere.example/x", headers: { Authorization: "Bearer literal" } } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(["name", "request.url", "request.headers.Authorization"]));
    expect(r.body.error.message).toMatch(/host elsewhere\.example is not in allow_hosts/);
    expect(await chainCount()).toBe(chain);
    expect((await call("/api/v1/verifiers/unknown-one", { token: admin })).status).toBe(404);
  });
});

describe("a match rule without a fingerprint pointer (issue 54)", () => {
  it("is refused, the rule named, for a tool whose intents carry fingerprints; warned where none has yet; fine with the pointer", async () => {
    const tool = unique("tool.fp");
    const name = unique("fp").toLowerCase();
    const op = unique("op-fp");
    expect((await ingest(agent, { operation_id: op, tool: { name: tool }, intent: { effect: "post", fingerprint: "sha256:abc" } })).status).toBe(201);
    const chain = await chainCount();
    const refused = await define({ ...EXAMPLE, name, tool });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ path: "expect[1].evidence.fingerprint", code: "fingerprint_pointer_missing", message: expect.stringMatching(/^rule 2 reads "match" without a fingerprint pointer, but intents of/) }]);
    expect(await chainCount()).toBe(chain);
    expect((await call(`/api/v1/verifiers/${name}`, { token: admin })).status).toBe(404);
    // The dry run records nothing and says what a save would refuse.
    // Its request is not sent (a secret not set here): the dry run still judges the rules.
    const dry = await call(`/api/v1/verifiers/${name}/dry-run`, { token: admin, body: { operation_id: op, definition: { ...EXAMPLE, name, tool } } });
    expect([dry.status, dry.body.recorded]).toEqual([200, false]);
    expect(dry.body.warnings).toEqual([expect.stringMatching(/^a save would refuse this: expect\[1\]\.evidence\.fingerprint: rule 2/)]);
    expect(await chainCount()).toBe(chain);

    const withFp = { ...EXAMPLE, name, tool, expect: EXAMPLE.expect.map((r, i) => (i === 1 ? { ...r, evidence: { object_id: "/data/id", fingerprint: "/data/sha256" } } : r)) };
    const ok = await define(withFp);
    expect([ok.status, ok.body.warnings]).toEqual([201, []]);

    const fresh = await define({ ...EXAMPLE, name: unique("fp-new").toLowerCase(), tool: unique("tool.unused") });
    expect(fresh.status).toBe(201);
    expect(fresh.body.warnings).toEqual([expect.stringMatching(/^expect\[1\]\.evidence\.fingerprint: rule 2 reads "match" without a fingerprint pointer; no intent of .* cannot be known yet/)]);
  });
});

describe("scheduling with the receipt", () => {
  it("a receipt of a tool with an enabled verifier gets its checks in the same write; a disabled verifier's tool gets none; a re-sent receipt adds none", async () => {
    const name = unique("sched").toLowerCase();
    const tool = unique("tool.sched");
    expect((await define({ ...EXAMPLE, name, tool, window: { checks_at: ["5m", "10m"], pending_until: "20m" } })).status).toBe(201);
    const id = unique("op-sched");
    const record = { operation_id: id, tool: { name: tool }, receipt: { status: "accepted", receipt_id: "r-1", observed_at: new Date().toISOString() } };
    expect((await ingest(agent, record)).status).toBe(201);
    const jobs = await jobsFor(id);
    expect(jobs.map((j) => [j.key, j.status])).toEqual(
      expect.arrayContaining([
        [`verifier:${name}@1:${id}:1`, "pending"],
        [`verifier:${name}@1:${id}:2`, "pending"],
        [`verifier:${name}@1:${id}:3`, "pending"],
      ]),
    );
    expect(jobs).toHaveLength(3);
    const final = JSON.parse(jobs.find((j) => j.key.endsWith(":3"))!.payload);
    expect(final).toMatchObject({ operation_id: id, name, version: 1, check: 3, of: 3, final: true });
    expect(Number(jobs.find((j) => j.key.endsWith(":3"))!.dueAt)).toBe(Date.parse(final.window_closes_at));
    expect((await ingest(agent, record)).status).toBe(200);
    expect(await jobsFor(id)).toHaveLength(3);

    await call(`/api/v1/verifiers/${name}`, { token: admin, method: "DELETE" });
    const later = unique("op-sched");
    expect((await ingest(agent, { ...record, operation_id: later })).status).toBe(201);
    expect(await jobsFor(later)).toEqual([]);
    // Another tool: none.
    const other = unique("op-other");
    expect((await ingest(agent, { ...record, operation_id: other, tool: { name: "some.other.tool" } })).status).toBe(201);
    expect(await jobsFor(other)).toEqual([]);
  });
});

describe("the dry run", () => {
  it("shows the refusal of plain http (this server does not allow it) and records nothing", async () => {
    const name = unique("dry").toLowerCase();
    const def = { ...EXAMPLE, name, tool: unique("tool.dry"), request: { method: "GET", url: "http://api.example.com/{operation_id}" } };
    const id = unique("op-dry");
    expect((await ingest(agent, { operation_id: id, receipt: { status: "accepted", observed_at: new Date().toISOString() } })).status).toBe(201);
    const chain = await chainCount();
    const r = await call(`/api/v1/verifiers/${name}/dry-run`, { token: admin, body: { operation_id: id, definition: def } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      verifier: { name, version: null },
      request: { method: "GET", url: `http://api.example.com/${id}` },
      response: null,
      error: { code: "scheme_not_allowed", message: expect.stringMatching(/RECONCILE_VERIFIER_ALLOW_HTTP=1/) },
      read: { status: "unavailable" },
      recorded: false,
    });
    expect(await chainCount()).toBe(chain);
    const missing = await call(`/api/v1/verifiers/${name}/dry-run`, { token: admin, body: { operation_id: "no-such-op", definition: def } });
    expect([missing.status, missing.body.error.code]).toEqual([404, "not_found"]);
    const mismatch = await call(`/api/v1/verifiers/other-name/dry-run`, { token: admin, body: { operation_id: id, definition: def } });
    expect(mismatch.status).toBe(422);
  });
});
