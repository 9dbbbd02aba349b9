import { afterEach, describe, expect, it } from "vitest";
import { parseJsonBytes } from "./body";
import { ApiError } from "./errors";
import { checkIngest, type CheckContext, type Checked } from "./ingest-check";
import { CheckPool, ingestWorkerCount, MAX_PENDING, MAX_WORKER_BYTES, WorkerGone } from "./ingest-pool";

/**
 * The fast path's worker threads (ingest-pool.ts), real threads running ingest-worker.ts: what
 * they send back is what checking on the request's thread gives, refusals included; a busy or
 * failed worker leaves the body to the request's thread. ingest-parity.itest.ts sends the same
 * cases through the production server, whose fast path uses the pool.
 */
const pools: CheckPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});
const pool = (size: number) => {
  const p = new CheckPool(size);
  pools.push(p);
  return p;
};

const ctx: CheckContext = { rights: { userId: "u1", mayIngest: true, mayVerify: false, isAdmin: false }, mayBeLarge: false, skewSeconds: 300 };

const record = (id: string, extra: Record<string, unknown> = {}) => ({
  operation_id: id,
  intent: { target: "social account", effect: "publish exactly one post", fingerprint: "sha256:abc", params: { text: "héllo ✓", n: -0, big: 1e21 } },
  receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: "2026-08-28T14:02:11Z" },
  side_effects: [{ name: "quota decremented", status: "observed" }],
  ...extra,
});

const bodies: [string, string | Uint8Array][] = [
  ["one record", JSON.stringify(record("op-1"))],
  ["a batch", JSON.stringify({ records: [record("op-a"), record("op-b"), record("op-c")] })],
  [
    "a batch with refused items (invalid, a canonical read without the verify scope, from the future)",
    JSON.stringify({
      records: [
        record("op-d"),
        { operation_id: "op-e" },
        record("op-f", { canonical_read: { status: "match", observed_at: "2026-08-28T14:31:02Z", evidence: {} } }),
        record("op-g", { receipt: { status: "accepted", observed_at: "2999-01-01T00:00:00Z" } }),
      ],
    }),
  ],
  ["an invalid single record", JSON.stringify({ operation_id: "op-h" })],
  ["malformed JSON", '{"operation_id": "x",'],
  ["an empty body", ""],
  ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
  ["a duplicate key", '{"operation_id":"x","operation_id":"y","intent":{}}'],
  ["records not an array", '{"records": {"0": {}}}'],
  ["no records", '{"records": []}'],
  ["501 records", JSON.stringify({ records: Array.from({ length: 501 }, () => ({})) })],
  ["a __proto__ key", '{"operation_id":"x","intent":{"params":{"__proto__":{"a":1}}}}'],
  ["deep nesting", `{"operation_id":"x","intent":{"params":${"[".repeat(5_000)}${"]".repeat(5_000)}}}`],
];

/** A check's outcome as data: errors by their API shape, records as they are. */
async function outcome(p: Promise<Checked>): Promise<unknown> {
  try {
    const c = await p;
    return c.kind === "single" ? c : { ...c, failed: c.failed.map((f) => ({ index: f.index, status: f.error.status, ...f.error.toJSON() })) };
  } catch (e) {
    if (e instanceof ApiError) return { refused: e.status, ...e.toJSON() };
    throw e;
  }
}

const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;
const buffer = (b: string | Uint8Array) => Buffer.from(typeof b === "string" ? Buffer.from(b) : b);

describe("ingest checks in worker threads", () => {
  it.each(bodies)("%s: the worker's answer is the request thread's", async (_name, body) => {
    const p = pool(1);
    const inWorker = p.check(buffer(body), ctx);
    expect(inWorker).not.toBeNull();
    const here = await outcome((async () => checkIngest(await parseJsonBytes(buffer(body)), ctx))());
    // Refusals of a time in the future name the server's clock when they were made.
    const now = (o: unknown) => JSON.parse(JSON.stringify(o).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "<now>"));
    expect(now(await outcome(inWorker!))).toEqual(now(here));
    expect(p.counts.inWorker).toBe(1);
  });

  it("the records come back whole: -0, large numbers and non-ASCII text survive the trip", async () => {
    const body = JSON.stringify(record("op-z")).replace('"n":0', '"n":-0');
    expect(body).toContain('"n":-0');
    const c = await pool(1).check(buffer(body), ctx)!;
    expect(c.kind).toBe("single");
    const intent = (c as Extract<Checked, { kind: "single" }>).record.raw.intent as { params: { text: string; n: number; big: number } };
    expect(Object.is(intent.params.n, -0)).toBe(true);
    expect(intent.params).toEqual({ text: "héllo ✓", n: -0, big: 1e21 });
  });

  it(`a worker takes up to ${MAX_PENDING} bodies; past that, and past ${MAX_WORKER_BYTES / 1024 / 1024} MiB, the request's thread checks them`, async () => {
    const p = pool(2);
    const body = buffer(JSON.stringify({ records: Array.from({ length: 50 }, (_, i) => record(`op-${i}`)) }));
    const taken = Array.from({ length: 2 * MAX_PENDING + 3 }, () => p.check(body, ctx));
    expect(taken.filter((t) => t !== null)).toHaveLength(2 * MAX_PENDING);
    expect(p.counts).toEqual({ inWorker: 2 * MAX_PENDING, declined: 3 });
    for (const t of taken) if (t) expect((await t).kind).toBe("batch");
    // Free again once answered.
    expect(p.check(body, ctx)).not.toBeNull();
    expect(p.check(Buffer.alloc(MAX_WORKER_BYTES + 1, 0x20), ctx)).toBeNull();
    expect(new CheckPool(0).check(body, ctx)).toBeNull();
  });

  it("a worker that dies gives its bodies back (WorkerGone), and the next body gets a new worker", async () => {
    const p = pool(1);
    p.warm();
    expect(p.running()).toBe(1);
    const body = buffer(JSON.stringify({ records: Array.from({ length: 400 }, (_, i) => record(`op-${i}`)) }));
    const inFlight = p.check(body, ctx)!;
    await p.close();
    await expect(inFlight).rejects.toBeInstanceOf(WorkerGone);
    expect(p.running()).toBe(0);
    const again = await p.check(buffer(JSON.stringify(record("op-after"))), ctx)!;
    expect(again.kind).toBe("single");
    expect(p.running()).toBe(1);
  });

  it("RECONCILE_INGEST_WORKERS: a whole number from 0 to 64, else the server refuses to start", () => {
    expect(ingestWorkerCount(env({ RECONCILE_INGEST_WORKERS: "0" }))).toBe(0);
    expect(ingestWorkerCount(env({ RECONCILE_INGEST_WORKERS: "3" }))).toBe(3);
    expect(ingestWorkerCount(env({}))).toBeGreaterThanOrEqual(0);
    expect(ingestWorkerCount(env({}))).toBeLessThanOrEqual(4);
    for (const bad of ["-1", "1.5", "lots", "65"]) expect(() => ingestWorkerCount(env({ RECONCILE_INGEST_WORKERS: bad }))).toThrow(/RECONCILE_INGEST_WORKERS/);
  });
});
