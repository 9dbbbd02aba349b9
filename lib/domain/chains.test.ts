import { createHash, generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkAgainstCheckpoints } from "./audit-verify";
import { chainOf, chainOfRecord, EMPTY_HEAD, headsRoot, headsSize, MultiChainVerifier, parseChainCount, type ChainHead } from "./chains";
import { checkpointSignatureValid, createChainsCheckpoint, createCheckpoint, formatCheckpoint, headsProblem, parseCheckpoint } from "./checkpoint";
import { chainHash, type ChainRecord } from "./hash";

const key = generateKeyPairSync("ed25519").privateKey;

/**
 * Appends operations' records to n chains as the store does: each operation's chain by
 * chainOf, seqs from one counter (with gaps, as rolled-back transactions leave), each chain
 * linked from the genesis hash. Returns the records in seq order.
 */
function build(n: number, ops: string[]): ChainRecord[] {
  const heads: ChainHead[] = Array.from({ length: n }, () => EMPTY_HEAD);
  const out: ChainRecord[] = [];
  let top = 0;
  ops.forEach((op, i) => {
    const c = chainOf(op, n);
    const seq = top + 1 + (n > 1 && i % 3 === 2 ? 1 : 0);
    const f = { seq, kind: "stage" as const, operation_id: op, recorded_at: "2026-12-01T10:00:00.000Z", actor: "a@b.test", payload: { i }, prev_hash: heads[c].hash };
    const r = { ...f, hash: chainHash(f) };
    heads[c] = { seq, hash: r.hash, records: heads[c].records + 1 };
    top = seq;
    out.push(r);
  });
  return out;
}

function verify(n: number, records: ChainRecord[], watch: number[] = []) {
  const v = new MultiChainVerifier(n, { watch });
  for (const r of records) if (!v.push(r)) break;
  return { verdict: v.verdict(), hashes: v.hashes, counts: v.counts, ends: v.ends() };
}

const ids = (k: number) => Array.from({ length: k }, (_, i) => `op-${i % 37}-${i}`);
const headsOf = (ends: { lastSeq: number; head: string; count: number }[]) => ends.map((e) => ({ seq: e.lastSeq, hash: e.head, records: e.count }));

describe("choosing a chain", () => {
  it("is stable, in range, and the same for every record of an operation", () => {
    for (const n of [1, 2, 4, 16, 64]) {
      for (const id of ids(200)) {
        const c = chainOf(id, n);
        expect(c).toBeGreaterThanOrEqual(0);
        expect(c).toBeLessThan(n);
        expect(chainOf(id, n)).toBe(c);
      }
    }
    expect(chainOf("anything", 1)).toBe(0);
    expect(chainOf(null, 16)).toBe(0);
  });

  it("is SHA-256's first four bytes modulo n (any implementation can recompute it)", () => {
    const id = "op-7f3a";
    expect(chainOf(id, 16)).toBe(createHash("sha256").update(id).digest().readUInt32BE(0) % 16);
  });

  it("spreads operations evenly", () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[chainOf(`op-${i}`, 16)]++;
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(150);
  });

  it("records of no operation go to chain 0; a record's chain is its operation's", () => {
    expect(chainOfRecord({ operation_id: null }, 8)).toBe(0);
    expect(chainOfRecord({ operation_id: 42 }, 8)).toBe(0);
    expect(chainOfRecord({ operation_id: "op-1" }, 8)).toBe(chainOf("op-1", 8));
  });

  it("reads RECONCILE_CHAINS: 1–64, default 1", () => {
    expect(parseChainCount(undefined)).toBe(1);
    expect(parseChainCount(" ")).toBe(1);
    expect(parseChainCount("16")).toBe(16);
    for (const bad of ["0", "65", "2.5", "four", "-1"]) expect(() => parseChainCount(bad)).toThrow(/RECONCILE_CHAINS/);
  });
});

describe("the Merkle root of the heads", () => {
  const leaf = (c: number, h: ChainHead) => createHash("sha256").update(Buffer.from([0])).update(`${c} ${h.seq} ${h.records} ${h.hash}`).digest();
  const node = (l: Buffer, r: Buffer) => createHash("sha256").update(Buffer.from([1])).update(l).update(r).digest();
  const h = (i: number): ChainHead => ({ seq: i + 1, hash: createHash("sha256").update(String(i)).digest("hex"), records: 1 });

  it("is RFC 6962's tree hash of one leaf per chain", () => {
    const heads = [h(0), h(1), h(2)];
    const expected = node(node(leaf(0, heads[0]), leaf(1, heads[1])), leaf(2, heads[2]));
    expect(headsRoot(heads)).toBe(expected.toString("hex"));
    expect(headsRoot([heads[0]])).toBe(leaf(0, heads[0]).toString("hex"));
    const five = [h(0), h(1), h(2), h(3), h(4)];
    const l = five.map((x, i) => leaf(i, x));
    expect(headsRoot(five)).toBe(node(node(node(l[0], l[1]), node(l[2], l[3])), l[4]).toString("hex"));
  });

  it("changes when any head, its record count, or the order of chains, changes", () => {
    const heads = Array.from({ length: 16 }, (_, i) => h(i));
    const root = headsRoot(heads);
    for (let i = 0; i < 16; i++) {
      expect(headsRoot(heads.map((x, j) => (j === i ? { ...x, seq: x.seq + 16 } : x)))).not.toBe(root);
      expect(headsRoot(heads.map((x, j) => (j === i ? { ...x, records: 2 } : x)))).not.toBe(root);
    }
    expect(headsRoot([heads[1], heads[0], ...heads.slice(2)])).not.toBe(root);
  });
});

describe("verifying several chains", () => {
  const opsArb = fc.array(fc.integer({ min: 0, max: 40 }).map((i) => `op-${i}`), { minLength: 1, maxLength: 60 });

  it("intact chains verify, and the verdict names every chain's end (property, 300 cases)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), opsArb, (n, ops) => {
        const records = build(n, ops);
        const { verdict, ends } = verify(n, records);
        expect(verdict).toMatchObject({ ok: true, count: ops.length });
        expect(ends.reduce((s, e) => s + e.count, 0)).toBe(ops.length);
        for (const [c, e] of ends.entries()) {
          const own = records.filter((r) => chainOfRecord(r, n) === c);
          expect(e.lastSeq).toBe(own.length ? own[own.length - 1].seq : 0);
        }
        if (n > 1 && verdict.ok) expect(verdict.head).toBe(headsRoot(headsOf(ends)));
        // Seqs follow the order the records were appended in, across chains.
        expect(records.map((r) => r.seq)).toEqual([...records.map((r) => r.seq)].sort((a, b) => a - b));
      }),
      { numRuns: 300 },
    );
  });

  it("a changed record is caught at its seq, a removed one at the next record of its chain, a record moved to another chain at once", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), opsArb.filter((o) => o.length > 3), fc.nat(), (n, ops, pick) => {
        const records = build(n, ops);
        const i = pick % records.length;
        const changed = records.map((r, j) => (j === i ? { ...r, payload: { changed: true } } : r));
        expect(verify(n, changed).verdict).toMatchObject({ ok: false, badSeq: records[i].seq });
        const later = records.filter((r, j) => j > i && chainOfRecord(r, n) === chainOfRecord(records[i], n));
        if (later.length) {
          const removed = records.filter((_, j) => j !== i);
          expect(verify(n, removed).verdict).toMatchObject({ ok: false, badSeq: later[0].seq, problem: expect.stringMatching(/prev_hash does not match|does not start from the genesis hash/) });
        }
        // The same record said to be another operation's, of another chain: its hash no longer
        // matches, and the chain it left misses it.
        const other = Array.from({ length: 50 }, (_, k) => `moved-${k}`).find((id) => chainOf(id, n) !== chainOfRecord(records[i], n))!;
        const moved = records.map((r, j) => (j === i ? { ...r, operation_id: other } : r));
        expect(verify(n, moved).verdict.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("records read as the wrong number of chains do not verify", () => {
    const records = build(4, ids(40));
    expect(verify(4, records).verdict.ok).toBe(true);
    expect(verify(1, records).verdict.ok).toBe(false);
    expect(verify(2, records).verdict.ok).toBe(false);
  });
});

describe("checkpoints of several chains", () => {
  const n = 4;
  const records = build(n, ids(80));
  const run = verify(n, records, []);
  const heads = headsOf(run.ends);

  it("sign the root of the heads and the total size, and read back from their text", () => {
    const c = createChainsCheckpoint(key, heads);
    expect(c.size).toBe(80);
    expect(headsSize(heads)).toBe(80);
    expect(c.head).toBe(headsRoot(heads));
    expect(checkpointSignatureValid(c)).toBe(true);
    const text = formatCheckpoint(c);
    expect(text).toMatch(/^reconcile-checkpoint v2\nchains: 4\nsize: 80\n/);
    expect(parseCheckpoint(text)).toEqual(c);
    expect(headsProblem(c)).toBeNull();
  });

  it("match the chains they were signed over, at each later size too", () => {
    const early = verify(n, records.slice(0, 30));
    const c1 = createChainsCheckpoint(key, headsOf(early.ends));
    const c2 = createChainsCheckpoint(key, heads);
    const watch = [...c1.heads!, ...c2.heads!].map((h) => h.seq).filter(Boolean);
    const { verdict, hashes, counts } = verify(n, records, watch);
    expect(checkAgainstCheckpoints(verdict, hashes, [c2, c1], undefined, counts)).toEqual([
      { ok: true, size: c1.size },
      { ok: true, size: c2.size },
    ]);
  });

  it("catch a truncated chain and a rewritten one, naming the chain", () => {
    const c = createChainsCheckpoint(key, heads);
    const watch = heads.map((h) => h.seq);
    const lastOfChain2 = heads[2].seq;
    expect(lastOfChain2).toBeGreaterThan(0);
    const cut = records.filter((r) => r.seq !== lastOfChain2);
    const a = verify(n, cut, watch);
    expect(checkAgainstCheckpoints(a.verdict, a.hashes, [c], undefined, a.counts)[0]).toMatchObject({ ok: false, problem: expect.stringMatching(/^truncated: chain 2 /) });

    // Rewrite chain 1 from its second record on, relinking every later record of it.
    let prev = "";
    const firstOf1 = records.find((r) => chainOfRecord(r, n) === 1)!.seq;
    const rewritten = records.map((r) => {
      if (chainOfRecord(r, n) !== 1) return r;
      if (r.seq === firstOf1) {
        prev = r.hash;
        return r;
      }
      const f = { ...r, payload: { forged: r.seq }, prev_hash: prev };
      const out = { ...f, hash: chainHash(f) };
      prev = out.hash;
      return out;
    });
    const b = verify(n, rewritten, watch);
    expect(b.verdict.ok).toBe(true);
    expect(checkAgainstCheckpoints(b.verdict, b.hashes, [c], undefined, b.counts)[0]).toMatchObject({ ok: false, problem: expect.stringMatching(/^rewritten: chain 1: seq \d+ does not match/) });
  });

  it("with a head line changed after signing, fail on the heads, not silently", () => {
    const c = createChainsCheckpoint(key, heads);
    const edited = formatCheckpoint(c).replace(`chain 3: ${heads[3].seq} ${heads[3].records} `, `chain 3: ${heads[3].seq + 1} ${heads[3].records} `);
    const parsed = parseCheckpoint(edited)!;
    expect(headsProblem(parsed)).toMatch(/do not give its signed root/);
    expect(checkAgainstCheckpoints(run.verdict, run.hashes, [parsed])[0]).toMatchObject({ ok: false });
  });

  it("a one-chain checkpoint does not pass for a database of several", () => {
    const c = createCheckpoint(key, 80, records[records.length - 1].hash);
    expect(checkAgainstCheckpoints(run.verdict, run.hashes, [c])[0]).toMatchObject({ ok: false, problem: expect.stringMatching(/of one chain/) });
  });
});
