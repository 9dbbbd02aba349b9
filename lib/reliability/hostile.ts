/**
 * Maximum-size hostile ingest requests (TRUST.md "What no request may do"), and a runner that
 * sends one while polling `/api/health` every 100 ms. Shared by `hostile.rtest.ts` (a loose
 * bound) and `npm run bench:hostile` (figures for docs/BENCHMARKS.md).
 *
 * Every body stays within the documented limits (4 MiB a request, 1 MiB a record, 500 records,
 * 1,000 reads a record, 64 levels of nesting) unless its shape is to exceed one of them.
 */
export const MAX_BODY = 4 * 1024 * 1024;
const MAX_RECORD = 1024 * 1024;

export type HostileShape = {
  name: string;
  /** What it is, for a person reading the bench's table. */
  what: string;
  body: () => string;
};

const past = Date.parse("2026-08-28T10:00:00Z");
const at = (ms: number) => new Date(past + ms).toISOString();

/** Records from `make(i)` until the next would take the batch past `limit` bytes (at most 500). */
function fill(make: (i: number) => unknown, count = 500, limit = MAX_BODY - 1024): string {
  const parts: string[] = [];
  let bytes = '{"records":[]}'.length;
  for (let i = 0; i < count; i++) {
    const text = JSON.stringify(make(i));
    if (Buffer.byteLength(text) > MAX_RECORD) throw new Error(`hostile shape: record ${i} is over 1 MiB`);
    if (bytes + text.length + 1 > limit) break;
    parts.push(text);
    bytes += text.length + 1;
  }
  return `{"records":[${parts.join(",")}]}`;
}

const read = (n: number, tag: string) => ({ status: "match", observed_at: at(n), evidence: { object_id: `o-${tag}`, fingerprint: `sha256:${n}` } });

/** An object of `n` keys with short names ("k0000"…), values 0 or 1. */
export function manyKeys(n: number, flip = -1): Record<string, number> {
  const o: Record<string, number> = {};
  for (let i = 0; i < n; i++) o[`k${i.toString(36).padStart(4, "0")}`] = i === flip ? 1 : 0;
  return o;
}

function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let d = 0; d < depth; d++) v = [v];
  return v;
}

export function hostileShapes(tag: string): HostileShape[] {
  return [
    {
      name: "reads, one operation",
      what: "records of 1,000 distinct canonical reads each, all for one operation, up to 4 MiB",
      body: () => fill((i) => ({ operation_id: `${tag}-reads`, canonical_read: Array.from({ length: 1000 }, (_, j) => read(i * 1000 + j, tag)) })),
    },
    {
      name: "reads, repeated",
      what: "the same 1,000 canonical reads in every record, one operation, up to 4 MiB",
      body: () => fill(() => ({ operation_id: `${tag}-repeated`, canonical_read: Array.from({ length: 1000 }, (_, j) => read(j, tag)) })),
    },
    {
      name: "100,000 keys",
      what: "intent and receipt params of 100,000 keys each, two operations (four 1 MB records)",
      body: () => fill(
          (i) =>
            i % 2
              ? { operation_id: `${tag}-keys-${i >> 1}`, receipt: { status: "accepted", observed_at: at(0), params: manyKeys(100_000, 7) } }
              : { operation_id: `${tag}-keys-${i >> 1}`, intent: { params: manyKeys(100_000) } },
          4,
        ),
    },
    {
      name: "side effects, one operation",
      what: "records of 1,000 distinct side effects each, all for one operation, up to 4 MiB",
      body: () => fill((i) => ({ operation_id: `${tag}-effects`, side_effects: Array.from({ length: 1000 }, (_, j) => ({ name: `effect ${i * 1000 + j}`, status: "observed" })) })),
    },
    {
      name: "deep arrays",
      what: "thousands of arrays nested 58 deep (the limit is 64), up to 4 MiB",
      body: () => fill((i) => ({ operation_id: `${tag}-deep-${i}`, intent: { params: { deep: Array.from({ length: 8000 }, () => nested(58)) } } })),
    },
    {
      name: "too deep",
      what: "one record nested 200,000 arrays deep",
      body: () => `{"operation_id":"${tag}-too-deep","intent":{"params":{"x":${"[".repeat(200_000)}${"]".repeat(200_000)}}}}`,
    },
    {
      name: "huge strings",
      what: "four records with a 1,000,000-character string each",
      body: () => fill((i) => ({ operation_id: `${tag}-string-${i}`, intent: { params: { text: "x".repeat(1_000_000) } } }), 4),
    },
    {
      name: "huge batch array",
      what: "a records array of 2,000,000 numbers (4 MiB)",
      body: () => `{"records":[${"1,".repeat(2_000_000 - 1)}1]}`,
    },
  ];
}

export type HostileRun = { status: number; ms: number; healthWorstMs: number; healthPolls: number; healthFailures: number; bytes: number; answer: string };

/**
 * Sends one body and, from just before until the answer is in, asks `/api/health` every 100 ms
 * (each poll on its own, so a frozen server shows up as a slow poll, not a missing one).
 */
export async function sendWithHealthPolls(base: string, token: string, body: string): Promise<HostileRun> {
  const polls: Promise<{ ms: number; ok: boolean }>[] = [];
  const poll = async () => {
    const t0 = performance.now();
    try {
      const res = await fetch(`${base}/api/health`);
      await res.arrayBuffer();
      return { ms: performance.now() - t0, ok: res.ok };
    } catch {
      return { ms: performance.now() - t0, ok: false };
    }
  };
  polls.push(poll());
  const timer = setInterval(() => polls.push(poll()), 100);
  const t0 = performance.now();
  let status = 0;
  let answer = "";
  try {
    const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body });
    answer = await res.text();
    status = res.status;
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - t0;
  const done = await Promise.all(polls);
  return {
    status,
    ms,
    healthWorstMs: Math.max(...done.map((p) => p.ms)),
    healthPolls: done.length,
    healthFailures: done.filter((p) => !p.ok).length,
    bytes: Buffer.byteLength(body),
    answer,
  };
}

/** "200 ×3, 422 ×1" for a batch answer; the status alone otherwise. */
export function itemStatuses(run: HostileRun): string {
  try {
    const parsed = JSON.parse(run.answer) as { results?: { status: number }[] };
    if (!parsed.results) return String(run.status);
    const counts = new Map<number, number>();
    for (const r of parsed.results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
    return `${run.status}: ${[...counts].map(([s, n]) => `${s} ×${n}`).join(", ")}`;
  } catch {
    return String(run.status);
  }
}
