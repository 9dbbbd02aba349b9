import { request } from "node:http";
import { connect } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import essay from "@/lib/domain/fixtures/essay-x-post.json";
import { baseUrl, call, chainCount, ingest, principal, unique } from "@/lib/testing/integration";

let ingestToken: string;
let readToken: string;

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  readToken = (await principal("viewer", ["read"])).token;
});

/** The essay's record exactly as printed there, with real values in place of its placeholders. */
function essayRecord(id: string) {
  return {
    operation_id: id,
    intent: {
      target: "social account",
      effect: "publish exactly one post",
      fingerprint: "sha256:9c1185a5c5e9fc54612808977ee8f548b2258d31",
    },
    receipt: { status: "accepted", receipt_id: "gw-x-20260828-7731", observed_at: "2026-08-28T14:02:11Z" },
    canonical_read: {
      status: "absent",
      observed_at: "2026-08-28T14:31:02Z",
      evidence: "public profile fetch and exact-text search do not show the post",
    },
    side_effects: [
      { name: "daily post ceiling decremented", status: "observed" },
      { name: "monthly publication index entry created", status: "observed" },
      { name: "channel statistics X post count", status: "not_observed" },
    ],
    idempotency: { enforced: false, key: id },
  };
}

const essayOutput = (id: string) => ({
  operation_id: id,
  outcome: "divergent",
  reason: "the write was accepted but the canonical effect is absent",
  failure_category: 4,
  observed_side_effects: ["daily post ceiling decremented", "monthly publication index entry created"],
  retry: { automatic: false, safe_replay_available: false, decision: "blocked until canonical state is reconciled" },
  duplicate: false,
});

async function stagesOf(id: string) {
  const r = await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: readToken });
  expect(r.status).toBe(200);
  return r;
}

describe("POST /api/v1/receipts", () => {
  it("the essay's record, as printed, yields exactly the essay's output", async () => {
    const id = unique("op-essay");
    const r = await ingest(ingestToken, essayRecord(id));
    expect(r.status).toBe(201);
    expect(r.body).toEqual(essayOutput(id));
  });

  it("the essay fixture yields its expected derived state", async () => {
    const record = { ...essay.record, operation_id: unique("op-fixture") };
    const r = await ingest(ingestToken, record);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ ...essay.expected, operation_id: record.operation_id, duplicate: false });
  });

  it("sending it again stores nothing and says duplicate", async () => {
    const id = unique("op-dup");
    await ingest(ingestToken, essayRecord(id));
    const before = await chainCount();
    const r = await ingest(ingestToken, essayRecord(id));
    expect(r.status).toBe(200);
    expect(r.body.duplicate).toBe(true);
    expect(r.body.outcome).toBe("divergent");
    expect(await chainCount()).toBe(before);
  });

  it("stages sent one by one, in any order, end in the same state as sent together", async () => {
    const together = unique("op-together");
    await ingest(ingestToken, { ...essay.record, operation_id: together });
    const whole = (await stagesOf(together)).body;

    const apart = unique("op-apart");
    const { operation_id: _id, intent, receipt, canonical_read, side_effects, ...envelope } = essay.record;
    const parts = [
      { operation_id: apart, side_effects },
      { operation_id: apart, canonical_read: canonical_read[1] },
      { operation_id: apart, receipt, ...envelope },
      { operation_id: apart, canonical_read: canonical_read[0] },
      { operation_id: apart, intent },
    ];
    const statuses = [];
    for (const p of parts) statuses.push((await ingest(ingestToken, p)).status);
    expect(statuses).toEqual([201, 200, 200, 200, 200]);
    const split = (await stagesOf(apart)).body;
    for (const key of ["outcome", "reason", "failure_category", "retry", "effective_outcome", "trajectory_id", "claimed_outcome", "tool", "agent"]) {
      expect(split[key], key).toEqual(whole[key]);
    }
    expect([...split.observed_side_effects].sort()).toEqual([...whole.observed_side_effects].sort());
    expect(split.stages.map((s: { stage: string }) => s.stage).sort()).toEqual(whole.stages.map((s: { stage: string }) => s.stage).sort());
  });

  it("a receipt alone is recorded, and a missing intent is shown as missing", async () => {
    const id = unique("op-receipt-only");
    const r = await ingest(ingestToken, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } });
    expect(r.status).toBe(201);
    expect(r.body.outcome).toBe("uncertain");
    const op = (await stagesOf(id)).body;
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["receipt"]);
  });

  it("50 concurrent identical POSTs store one record per stage", async () => {
    const id = unique("op-race");
    const before = await chainCount();
    const results = await Promise.all(Array.from({ length: 50 }, () => ingest(ingestToken, essayRecord(id))));
    expect(results.map((r) => r.status).sort((a, b) => b - a)).toEqual([201, ...Array(49).fill(200)]);
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    const op = (await stagesOf(id)).body;
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent", "receipt", "canonical_read", "side_effects"]);
    expect(await chainCount()).toBe(before + 4);
  });

  it("a different intent for a known operation is 409 and the stored records stay byte-identical", async () => {
    const id = unique("op-conflict");
    await ingest(ingestToken, essayRecord(id));
    const before = (await stagesOf(id)).text;
    const count = await chainCount();
    const r = await ingest(ingestToken, { operation_id: id, intent: { target: "social account", effect: "publish two posts" } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("conflict");
    expect(r.body.error.message).toMatch(/different intent/);
    expect((await stagesOf(id)).text).toBe(before);
    expect(await chainCount()).toBe(count);
  });

  it("a different receipt, or a different envelope value, is a conflict too", async () => {
    const id = unique("op-conflict2");
    await ingest(ingestToken, { ...essayRecord(id), tool: { name: "social.publish" } });
    const receipt = { ...essayRecord(id).receipt, status: "rejected" };
    expect((await ingest(ingestToken, { operation_id: id, receipt })).status).toBe(409);
    const read = { status: "match", observed_at: "2026-08-29T00:00:00Z", evidence: "x" };
    expect((await ingest(ingestToken, { operation_id: id, tool: { name: "other" }, canonical_read: read })).status).toBe(409);
  });

  it("a later canonical read is appended and changes the outcome", async () => {
    const id = unique("op-later");
    await ingest(ingestToken, essayRecord(id));
    const r = await ingest(ingestToken, {
      operation_id: id,
      canonical_read: { status: "match", observed_at: "2026-08-28T15:00:00Z", evidence: { object_id: "x-1", fingerprint: essayRecord(id).intent.fingerprint } },
    });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe("verified");
    const op = (await stagesOf(id)).body;
    const reads = op.stages.filter((s: { stage: string }) => s.stage === "canonical_read");
    expect(reads).toHaveLength(2);
    expect(reads[1].deciding).toBe(true);
  });

  it("a read before the receipt is kept, marked stale, and proves nothing", async () => {
    const id = unique("op-stale");
    const r = await ingest(ingestToken, {
      operation_id: id,
      receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" },
      canonical_read: { status: "match", observed_at: "2026-08-28T09:59:59Z", evidence: "seen" },
    });
    expect(r.body.outcome).toBe("uncertain");
    const op = (await stagesOf(id)).body;
    expect(op.stages[1]).toMatchObject({ stage: "canonical_read", stale: true });
  });

  it("a batch with one invalid item stores the others and not that one (207)", async () => {
    const ids = [unique("op-b"), unique("op-b"), unique("op-b")];
    const before = await chainCount();
    const r = await ingest(ingestToken, {
      records: [essayRecord(ids[0]), { operation_id: ids[1], receipt: { status: "done", observed_at: "2026-08-28T10:00:00Z" } }, essayRecord(ids[2])],
    });
    expect(r.status).toBe(207);
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([201, 422, 201]);
    expect(r.body.results[1].error.message).toMatch(/receipt\.status/);
    expect(r.body.results[0]).toMatchObject({ index: 0, outcome: "divergent" });
    expect(await chainCount()).toBe(before + 8);
    expect((await call(`/api/v1/operations/${ids[1]}`, { token: readToken })).status).toBe(404);
  });

  it("a batch where every item succeeds answers 200; a conflicting item stores nothing", async () => {
    const id = unique("op-bc");
    await ingest(ingestToken, essayRecord(id));
    const fresh = unique("op-bc");
    const r = await ingest(ingestToken, { records: [essayRecord(fresh), { operation_id: id, intent: { effect: "other" } }] });
    expect(r.status).toBe(207);
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([201, 409]);
    const ok = await ingest(ingestToken, { records: [essayRecord(unique("op-ok")), essayRecord(unique("op-ok"))] });
    expect(ok.status).toBe(200);
  });

  it("more than 500 records is 413 and stores nothing", async () => {
    const before = await chainCount();
    const records = Array.from({ length: 501 }, () => ({ operation_id: unique("op-many"), intent: {} }));
    const r = await ingest(ingestToken, { records });
    expect(r.status).toBe(413);
    expect(await chainCount()).toBe(before);
  });
});

describe("bad input gets a clear 4xx and stores nothing", () => {
  let deep = "1";
  for (let i = 0; i < 20_000; i++) deep = `[${deep}]`;
  const cases: [string, Parameters<typeof call>[1], number, RegExp][] = [
    ["malformed JSON", { raw: '{"operation_id": "x",' }, 400, /not valid JSON/],
    ["an empty body", { raw: "" }, 400, /empty/],
    ["invalid UTF-8", { raw: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) }, 400, /UTF-8/],
    ["a wrong content type", { raw: "operation_id=x", contentType: "application/x-www-form-urlencoded" }, 415, /Content-Type: application\/json/],
    ["a missing operation_id", { body: { intent: { effect: "x" } } }, 422, /operation_id/],
    ["a record with no stage", { body: { operation_id: "op-nostage" } }, 422, /at least one stage/],
    ["a wrong receipt status", { body: { operation_id: "op-enum", receipt: { status: "ok", observed_at: "2026-08-28T10:00:00Z" } } }, 422, /receipt\.status/],
    ["a wrong read status", { body: { operation_id: "op-enum2", canonical_read: { status: "present", observed_at: "2026-08-28T10:00:00Z" } } }, 422, /canonical_read/],
    ["a bad timestamp", { body: { operation_id: "op-ts", receipt: { status: "accepted", observed_at: "28/08/2026" } } }, 422, /RFC 3339/],
    ["a 5 MiB body", { raw: JSON.stringify({ operation_id: "op-big", intent: { effect: "x".repeat(5 * 1024 * 1024) } }) }, 413, /larger than 4 MiB/],
    ["a 2 MiB single record", { raw: JSON.stringify({ operation_id: "op-big2", intent: { params: { a: "x".repeat(2 * 1024 * 1024) } } }) }, 413, /at most 1 MiB/],
    ["20,000-deep nesting", { raw: `{"operation_id":"op-deep","intent":{"params":{"a":${deep}}}}` }, 422, /deeper than/],
    ["a __proto__ key", { raw: '{"operation_id":"op-proto","intent":{"params":{"__proto__":{"admin":true}}}}' }, 422, /__proto__/],
    ["a duplicate key", { raw: '{"operation_id":"op-dup","receipt":{"status":"rejected","status":"accepted","observed_at":"2026-08-28T10:00:00Z"}}' }, 400, /"receipt\.status" appears twice/],
    ["a JSON array", { body: [1, 2] }, 422, /JSON object/],
    ["records that is not an array", { body: { records: { a: 1 } } }, 422, /array/],
  ];
  it.each(cases)("%s", async (_name, init, status, message) => {
    const before = await chainCount();
    const r = await call("/api/v1/receipts", { token: ingestToken, ...init });
    expect(r.status).toBe(status);
    expect(r.body.error.message).toMatch(message);
    expect(typeof r.body.error.code).toBe("string");
    expect(await chainCount()).toBe(before);
  });
});

/**
 * One upload on a fresh connection, as most agents' HTTP clients send it: the status the client
 * read, or the socket error it got instead (a server that answers before reading the body and
 * closes makes the client see EPIPE/ECONNRESET, not the answer).
 */
function upload(bytes: number, opts: { token: string; stream: boolean; contentType?: string }): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const body = Buffer.alloc(bytes, 0x61);
  const headers: Record<string, string> = { authorization: `Bearer ${opts.token}`, "content-type": opts.contentType ?? "application/json", connection: "close" };
  if (!opts.stream) headers["content-length"] = String(bytes);
  return new Promise((resolve) => {
    const req = request({ host: hostname, port, method: "POST", path: "/api/v1/receipts", headers, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(String(res.statusCode)));
      res.on("error", (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    });
    req.on("error", (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    if (!opts.stream) return void req.end(body);
    let offset = 0;
    const write = () => {
      while (offset < bytes) {
        const more = req.write(body.subarray(offset, offset + 64 * 1024));
        offset += 64 * 1024;
        if (!more) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

describe("a refused upload is answered, not reset", () => {
  it("over 4 MiB, sent with a length or streamed, the client reads the 413 every time; a refused token or type reads 401/415", async () => {
    const before = await chainCount();
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) {
      const stream = i % 2 === 1;
      seen.push(`${stream ? "streamed" : "length"} ${await upload((5 + (i % 6)) * 1024 * 1024, { token: ingestToken, stream })}`);
    }
    seen.push(`unauthenticated ${await upload(6 * 1024 * 1024, { token: "nope", stream: false })}`);
    seen.push(`wrong type ${await upload(6 * 1024 * 1024, { token: ingestToken, stream: true, contentType: "text/plain" })}`);
    expect(seen).toEqual([
      ...Array.from({ length: 12 }, (_, i) => `${i % 2 === 1 ? "streamed" : "length"} 413`),
      "unauthenticated 401",
      "wrong type 415",
    ]);
    expect(await chainCount()).toBe(before);
  }, 60_000);

  it("an upload cut off mid-body stores nothing, and the server carries on", async () => {
    const before = await chainCount();
    const { hostname, port } = new URL(baseUrl);
    const id = unique("op-cut");
    const body = JSON.stringify(essayRecord(id));
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            `POST /api/v1/receipts HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${ingestToken}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, body.length / 2)}`,
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on("error", reject);
      });
    }
    const after = await ingest(ingestToken, essayRecord(unique("op-after-cut")));
    expect(after.status).toBe(201);
    expect(await chainCount()).toBe(before + 4); // the essay record's four stages, nothing else
    expect((await call(`/api/v1/operations/${id}`, { token: readToken })).status).toBe(404);
  });
});

describe("authentication and scopes", () => {
  it("no token is 401, an unknown token is 401, a read-only token may not ingest (403)", async () => {
    const record = essayRecord(unique("op-auth"));
    expect((await call("/api/v1/receipts", { body: record })).status).toBe(401);
    expect((await call("/api/v1/receipts", { body: record, token: "rcl_" + "A".repeat(43) })).status).toBe(401);
    const forbidden = await call("/api/v1/receipts", { body: record, token: readToken });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("forbidden");
    expect(forbidden.body.error.message).toBe("this token may not send receipts: that needs a token with the ingest scope");
  });
  it("an ingest-only token may not read; a viewer's token may not correct, and each 403 says what is missing", async () => {
    const { token } = await principal("viewer", ["ingest"]);
    const read = await call("/api/v1/operations", { token });
    expect(read.status).toBe(403);
    expect(read.body.error.message).toBe("this token may not read operations: that needs a token with the read scope");
    const correct = await call("/api/v1/operations/op-1/corrections", { token: readToken, body: { action: "reopen", reason: "x" } });
    expect(correct.status).toBe(403);
    expect(correct.body.error.message).toBe("this token may not correct operations: that needs the reviewer role or above");
  });
});
