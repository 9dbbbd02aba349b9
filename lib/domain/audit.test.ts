import { createHash, createPublicKey, generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvCheckpointRow, csvRow, inertCell } from "./audit-format";
import { checkAgainstCheckpoints } from "./audit-verify";
import { CHECKPOINT_EVERY_MS, CHECKPOINT_EVERY_RECORDS, createCheckpoint, formatCheckpoint, keyFingerprint, parseCheckpoint, parseCheckpointEvery, publicKeyFromText, publicKeyPem } from "./checkpoint";
import { chainHash, ChainVerifier, GENESIS_HASH, type ChainRecord } from "./hash";

const key = generateKeyPairSync("ed25519").privateKey;

function build(payloads: unknown[]): ChainRecord[] {
  const out: ChainRecord[] = [];
  let prev = GENESIS_HASH;
  payloads.forEach((payload, i) => {
    const f = { seq: i + 1, kind: "stage" as const, operation_id: `op-${i % 3}`, recorded_at: "2026-08-28T10:00:00.000Z", actor: "a@b.test", payload, prev_hash: prev };
    const r = { ...f, hash: chainHash(f) };
    out.push(r);
    prev = r.hash;
  });
  return out;
}

function verify(records: ChainRecord[], watch: number[] = []) {
  const v = new ChainVerifier(undefined, { watch });
  for (const r of records) if (!v.push(r)) break;
  return { verdict: v.verdict(), hashes: v.hashes };
}

/** Flips one byte of one field's serialised form, keeping the record parseable. */
function flip(r: ChainRecord, field: keyof ChainRecord, at: number): ChainRecord {
  const text = JSON.stringify(r[field]);
  const i = at % text.length;
  const c = text.charCodeAt(i);
  const swapped = text.slice(0, i) + String.fromCharCode(c === 48 ? 49 : /[0-9]/.test(text[i]) ? 48 : /[a-z]/.test(text[i]) ? (c === 122 ? 121 : c + 1) : c) + text.slice(i + 1);
  let value: unknown;
  try {
    value = JSON.parse(swapped);
  } catch {
    value = JSON.parse(text);
  }
  if (JSON.stringify(value) === text || value === r[field]) value = typeof r[field] === "string" ? `${r[field]}x` : field === "seq" ? (r[field] as number) + 7 : { tampered: r[field] };
  return { ...r, [field]: value };
}

const chainArb = fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 3, maxLength: 25 }).map(build);
const FIELDS: (keyof ChainRecord)[] = ["seq", "kind", "operation_id", "recorded_at", "actor", "payload", "prev_hash", "hash"];
const RUNS = { numRuns: 1000 };

describe("tamper evidence (property-based, 1,000 cases each)", () => {
  it("an intact chain verifies", () => {
    fc.assert(
      fc.property(chainArb, (c) => {
        expect(verify(c).verdict).toMatchObject({ ok: true, count: c.length });
      }),
      RUNS,
    );
  });

  it("flipping any byte of any field of any record is caught, at that record", () => {
    fc.assert(
      fc.property(chainArb, fc.nat(), fc.constantFrom(...FIELDS), fc.nat(), (c, k0, field, at) => {
        const k = k0 % c.length;
        const tampered = [...c];
        tampered[k] = flip(c[k], field, at);
        expect(verify(tampered).verdict).toMatchObject({ ok: false, badSeq: k + 1 });
      }),
      RUNS,
    );
  });

  it("deleting a record is caught at its seq (the last one, by a checkpoint)", () => {
    fc.assert(
      fc.property(chainArb, fc.nat(), (c, k0) => {
        const k = k0 % c.length;
        const cut = c.filter((_, i) => i !== k);
        const cp = createCheckpoint(key, c.length, c[c.length - 1].hash);
        const { verdict, hashes } = verify(cut, [cp.size]);
        if (k < c.length - 1) expect(verdict).toMatchObject({ ok: false, badSeq: k + 1 });
        else expect(checkAgainstCheckpoints(verdict, hashes, [cp])[0]).toMatchObject({ ok: false, badSeq: c.length });
      }),
      RUNS,
    );
  });

  it("inserting a record is caught where it stands", () => {
    fc.assert(
      fc.property(chainArb, fc.nat(), fc.jsonValue({ maxDepth: 1 }), (c, k0, payload) => {
        const k = k0 % c.length;
        const f = { seq: k + 1, kind: "stage" as const, operation_id: "op-x", recorded_at: "2026-08-28T10:00:00.000Z", actor: "mallory", payload, prev_hash: k ? c[k - 1].hash : GENESIS_HASH };
        const forged = { ...f, hash: chainHash(f) };
        const tampered = [...c.slice(0, k), forged, ...c.slice(k)];
        // The forged record is self-consistent and linked; the chain breaks at the record it displaced.
        expect(verify(tampered).verdict).toMatchObject({ ok: false, badSeq: k + 2 });
      }),
      RUNS,
    );
  });

  it("swapping two records is caught at the first", () => {
    fc.assert(
      fc.property(chainArb, fc.nat(), fc.nat(), (c, a0, b0) => {
        const a = a0 % c.length;
        const b = b0 % c.length;
        fc.pre(a !== b);
        const [i, j] = [Math.min(a, b), Math.max(a, b)];
        const t = [...c];
        [t[i], t[j]] = [t[j], t[i]];
        expect(verify(t).verdict).toMatchObject({ ok: false, badSeq: i + 1 });
      }),
      RUNS,
    );
  });

  it("a chain forged in the middle with valid ends is rejected", () => {
    fc.assert(
      fc.property(chainArb, fc.nat(), (c, k0) => {
        const k = 1 + (k0 % (c.length - 2));
        const f = { ...c[k], payload: { forged: true } };
        const forged = { ...f, hash: chainHash(f) };
        const t = [...c.slice(0, k), forged, ...c.slice(k + 1)];
        expect(t[0]).toEqual(c[0]);
        expect(t[t.length - 1]).toEqual(c[c.length - 1]);
        expect(verify(t).verdict).toMatchObject({ ok: false, badSeq: k + 2 });
      }),
      RUNS,
    );
  });

  it("truncation and a rewritten tail are caught against a checkpoint", () => {
    fc.assert(
      fc.property(chainArb, fc.nat(), fc.boolean(), (c, k0, truncate) => {
        const mid = 1 + (k0 % (c.length - 1));
        const early = createCheckpoint(key, mid - 1 || 1, c[(mid - 1 || 1) - 1].hash);
        const cp = createCheckpoint(key, c.length, c[c.length - 1].hash);
        let t: ChainRecord[];
        if (truncate) t = c.slice(0, mid);
        else t = build([...c.slice(0, mid).map((r) => r.payload), ...c.slice(mid).map(() => ({ rewritten: true }))]);
        const { verdict, hashes } = verify(t, [early.size, cp.size]);
        expect(verdict.ok).toBe(true); // on its own, a rewritten tail is a valid chain
        const results = checkAgainstCheckpoints(verdict, hashes, [early, cp]);
        expect(results[1].ok).toBe(false);
        // Records 1..mid are untouched, so the early checkpoint still matches and bounds the damage.
        expect(results[0].ok).toBe(true);
        if (!truncate) expect(results[1]).toMatchObject({ badSeq: early.size + 1 });
        else expect(results[1]).toMatchObject({ badSeq: mid + 1 });
      }),
      RUNS,
    );
    // Two Ed25519 signatures and their checks per case: 3–4 s for 1,000 cases on a quiet core.
  }, 30_000);

  it("a filtered export (gaps) still verifies record by record; an edit inside it is caught", () => {
    fc.assert(
      fc.property(chainArb, fc.array(fc.boolean(), { minLength: 25, maxLength: 25 }), fc.nat(), (c, keep, k0) => {
        const subset = c.filter((_, i) => keep[i]);
        fc.pre(subset.length > 0);
        const v = new ChainVerifier(undefined, { allowGaps: true });
        expect(subset.every((r) => v.push(r))).toBe(true);
        const k = k0 % subset.length;
        const t = [...subset];
        t[k] = { ...t[k], payload: { edited: true } };
        const v2 = new ChainVerifier(undefined, { allowGaps: true });
        let bad: number | null = null;
        for (const r of t) if (!v2.push(r)) break;
        const verdict = v2.verdict();
        if (!verdict.ok) bad = verdict.badSeq;
        expect(bad).toBe(t[k].seq);
      }),
      RUNS,
    );
  });
});

describe("checkpoints", () => {
  it("round-trip as plain text and refuse a changed signature, size or key", () => {
    const cp = createCheckpoint(key, 42, "a".repeat(64));
    const text = formatCheckpoint(cp);
    expect(text).toMatch(/^reconcile-checkpoint v1\nsize: 42\nhead: a{64}\ntime: .+\nkey: ed25519:.+\nsignature: .+\n$/);
    const parsed = parseCheckpoint(text)!;
    const verdict = { ok: true as const, count: 42, head: "a".repeat(64), lastSeq: 42 };
    const hashes = new Map([[42, "a".repeat(64)]]);
    expect(checkAgainstCheckpoints(verdict, hashes, [parsed])).toEqual([{ ok: true, size: 42 }]);
    expect(checkAgainstCheckpoints(verdict, hashes, [{ ...parsed, size: 41 }])[0].ok).toBe(false);
    const other = createCheckpoint(generateKeyPairSync("ed25519").privateKey, 42, "a".repeat(64));
    expect(checkAgainstCheckpoints(verdict, hashes, [{ ...parsed, signature: other.signature }])[0]).toMatchObject({ ok: false, problem: expect.stringMatching(/invalid signature/) });
  });

  it("with a pinned key, a validly signed checkpoint by any other key fails, naming both fingerprints", () => {
    const verdict = { ok: true as const, count: 42, head: "a".repeat(64), lastSeq: 42 };
    const hashes = new Map([[42, "a".repeat(64)]]);
    const mine = createCheckpoint(key, 42, "a".repeat(64));
    const forged = createCheckpoint(generateKeyPairSync("ed25519").privateKey, 42, "a".repeat(64));
    // Unpinned, the forger's own key vouches for the forgery: that is what pinning is for.
    expect(checkAgainstCheckpoints(verdict, hashes, [forged])[0].ok).toBe(true);
    expect(checkAgainstCheckpoints(verdict, hashes, [mine], mine.key)).toEqual([{ ok: true, size: 42 }]);
    const [refused] = checkAgainstCheckpoints(verdict, hashes, [forged], mine.key);
    expect(refused).toMatchObject({ ok: false });
    expect(!refused.ok && refused.problem).toBe(`the checkpoint at size 42 is signed by key ${keyFingerprint(forged.key)}, not by the pinned key ${keyFingerprint(mine.key)}`);
  });

  it("a key's fingerprint is the SHA-256 of its SPKI DER, whichever way the key is written", () => {
    const pub = createPublicKey(key);
    const der = pub.export({ format: "der", type: "spki" });
    const expected = `sha256:${createHash("sha256").update(der).digest("hex")}`;
    const line = `ed25519:${der.toString("base64")}`;
    expect(keyFingerprint(line)).toBe(expected);
    expect(publicKeyFromText(pub.export({ format: "pem", type: "spki" }).toString())).toBe(line);
    expect(publicKeyFromText(key.export({ format: "pem", type: "pkcs8" }).toString())).toBe(line);
    expect(publicKeyFromText(` ${line}\n`)).toBe(line);
    expect(publicKeyPem(line)).toBe(pub.export({ format: "pem", type: "spki" }).toString());
    expect(() => publicKeyFromText("hello")).toThrow(/PEM public key/);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "pem", type: "spki" }).toString();
    expect(() => publicKeyFromText(rsa)).toThrow(/Ed25519/);
    expect(keyFingerprint("ed25519:AAAA")).toBe("(an unreadable key)");
  });
});

describe("RECONCILE_CHECKPOINT_EVERY", () => {
  it("takes records, a time, or both; a part left out keeps its default", () => {
    expect(parseCheckpointEvery(undefined)).toEqual({ records: CHECKPOINT_EVERY_RECORDS, ms: CHECKPOINT_EVERY_MS });
    expect(parseCheckpointEvery(" ")).toEqual({ records: 10_000, ms: 3_600_000 });
    expect(parseCheckpointEvery("500")).toEqual({ records: 500, ms: 3_600_000 });
    expect(parseCheckpointEvery("15m")).toEqual({ records: 10_000, ms: 900_000 });
    expect(parseCheckpointEvery("2h, 100")).toEqual({ records: 100, ms: 7_200_000 });
    expect(parseCheckpointEvery("90s")).toEqual({ records: 10_000, ms: 90_000 });
  });

  it.each(["0", "-5", "15 m", "15min", "1.5h", "10000,20000", "5m,1h", "abc", "1e4", ","])("refuses %j with a reason", (text) => {
    expect(() => parseCheckpointEvery(text)).toThrow(/RECONCILE_CHECKPOINT_EVERY/);
  });
});

describe("CSV", () => {
  it("makes spreadsheet formulas inert", () => {
    for (const v of ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx"]) expect(inertCell(v)).toBe(`'${v}`);
    expect(inertCell("op-1")).toBe("op-1");
    const row = csvRow(build([{ a: 1 }]).map((r) => ({ ...r, operation_id: '=HYPERLINK("http://evil")', actor: "@attacker" }))[0]);
    expect(row).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(row).toContain("'@attacker");
    expect(row.split(",")[0]).toBe("1");
  });

  it("a checkpoint row is one by its columns: kind checkpoint and no seq", () => {
    const cp = createCheckpoint(key, 7, "b".repeat(64), "2026-11-30T00:00:00.000Z");
    const row = csvCheckpointRow(cp, { kind: "checkpoint", ...cp });
    expect(row.startsWith(",checkpoint,,2026-11-30T00:00:00.000Z,,")).toBe(true);
    expect(row.trim().endsWith(`,,${"b".repeat(64)}`)).toBe(true);
  });
});
