import { hash } from "node:crypto";
import canonicalizeImport from "canonicalize";

// canonicalize ships CommonJS with a default export; normalise both module shapes.
const canonicalizeFn = ((canonicalizeImport as unknown as { default?: unknown }).default ??
  canonicalizeImport) as (v: unknown) => string | undefined;

/** RFC 8785 (JSON Canonicalization Scheme) text of a JSON value. */
export function canonicalJson(value: unknown): string {
  // Scalars (a chain record's fields: seven of them a record) as the library writes them,
  // without its walk: a string is its JSON text once well-formed, a finite number its
  // ECMAScript text. Anything else, and every refusal, is the library's.
  if (typeof value === "string" && (value as unknown as { isWellFormed(): boolean }).isWellFormed()) return JSON.stringify(value);
  if (typeof value === "number" && Number.isFinite(value)) return JSON.stringify(value);
  if (value === null) return "null";
  const text = canonicalizeFn(value);
  if (text === undefined) throw new Error("canonicalJson: value is not representable as JSON");
  return text;
}

export function sha256Hex(text: string): string {
  // The one-shot form (UTF-8, as update(text, "utf8")): half the cost of a Hash object for a
  // chain record's ~600 characters, four of them a receipt (docs/BENCHMARKS.md, session 19).
  return hash("sha256", text, "hex");
}

/**
 * Equality of two JSON values, independent of key order: what comparing their canonical JSON
 * says, found by walking both once (no sorting, no text: 100,000-key params compare in
 * milliseconds instead of the half second canonicalising both took). Iterative, so any depth.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  // Two parallel stacks of the arrays and objects still to compare; plain values are compared
  // where they are met, so 100,000 keys of numbers allocate nothing per key.
  const xs: object[] = [];
  const ys: object[] = [];
  /** false when x and y differ as plain values or as kinds; otherwise true, queueing containers. */
  const meet = (x: unknown, y: unknown): boolean => {
    if (x === undefined) x = null;
    if (y === undefined) y = null;
    if (x === y) return true;
    // Numbers print canonically (ECMAScript): equal text is equal value, 0 and -0 alike.
    if (x === null || y === null || typeof x !== "object" || typeof y !== "object") return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    xs.push(x);
    ys.push(y);
    return true;
  };
  if (!meet(a, b)) return false;
  while (xs.length) {
    const x = xs.pop()!;
    const y = ys.pop()!;
    if (Array.isArray(x)) {
      const yl = y as unknown[];
      if (x.length !== yl.length) return false;
      for (let i = 0; i < x.length; i++) if (!meet(x[i], yl[i])) return false;
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    // canonicalJson drops keys whose value is undefined.
    let xCount = 0;
    for (const k of Object.keys(xo)) {
      const xv = xo[k];
      if (xv === undefined) continue;
      xCount++;
      const yv = yo[k];
      if (yv === undefined || !Object.hasOwn(yo, k) || !meet(xv, yv)) return false;
    }
    let yCount = 0;
    for (const k of Object.keys(yo)) if (yo[k] !== undefined) yCount++;
    if (xCount !== yCount) return false;
  }
  return true;
}

/** The hash-chained fields of one audit record (docs/API.md "Audit export"). */
export type ChainFields = {
  seq: number;
  kind: "stage" | "correction" | "security" | "assignment" | "comment" | "approval" | "attempt";
  operation_id: string | null;
  recorded_at: string;
  actor: string | null;
  payload: unknown;
  prev_hash: string;
};

/** The first record's prev_hash. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * hash = SHA-256 of the canonical JSON of every chained field, prev_hash included.
 * `payloadCanonical`, when the caller already has it, is `canonicalJson(fields.payload)`: the
 * text is then composed around it instead of canonicalising the payload again (ingest computes
 * it once, outside the chain lock). Keys in RFC 8785 order: actor, kind, operation_id, payload,
 * prev_hash, recorded_at, seq.
 */
export function chainHash(fields: ChainFields, payloadCanonical?: string): string {
  if (payloadCanonical !== undefined) {
    const j = canonicalJson;
    return sha256Hex(
      `{"actor":${j(fields.actor)},"kind":${j(fields.kind)},"operation_id":${j(fields.operation_id)},"payload":${payloadCanonical},` +
        `"prev_hash":${j(fields.prev_hash)},"recorded_at":${j(fields.recorded_at)},"seq":${j(fields.seq)}}`,
    );
  }
  return sha256Hex(
    canonicalJson({
      seq: fields.seq,
      kind: fields.kind,
      operation_id: fields.operation_id,
      recorded_at: fields.recorded_at,
      actor: fields.actor,
      payload: fields.payload,
      prev_hash: fields.prev_hash,
    }),
  );
}

export type ChainRecord = ChainFields & { hash: string };

/** A record whose content cannot even be canonicalised (e.g. 1e999 in a file) does not match. */
function hashMatches(r: ChainRecord): boolean {
  try {
    return chainHash(r) === r.hash;
  } catch {
    return false;
  }
}

/** One chain's end, in a verdict over several chains (lib/domain/chains.ts): seq 0 and the genesis hash when it is empty. */
export type ChainEnd = { lastSeq: number; head: string; count: number };

export type ChainVerdict =
  | { ok: true; count: number; head: string; lastSeq: number; chains?: ChainEnd[] }
  | { ok: false; badSeq: number; count: number; problem: string };

/**
 * Walks every link, one record at a time (so a million-record export streams through): each
 * record's hash must match its own content, its prev_hash the previous record's hash, and seq
 * must step by one. The first failure is kept and names the first bad seq.
 */
export class ChainVerifier {
  private prevHash: string;
  private prevSeq: number;
  private count = 0;
  private failure: { badSeq: number; problem: string } | null = null;
  private readonly allowGaps: boolean;
  /**
   * One of several chains sharing the seq space (lib/domain/chains.ts): its seqs rise but not by
   * one, and each record links to the previous one of its chain. Otherwise the one chain: seq
   * steps by one.
   */
  private readonly linked: boolean;
  /** Hashes seen at the seqs someone asked about (checkpoint sizes or heads). */
  readonly hashes = new Map<number, string>();
  /** How many records this chain held up to each watched seq. */
  readonly counts = new Map<number, number>();
  private readonly watch: Set<number>;

  constructor(
    start: { prevHash: string; prevSeq: number } = { prevHash: GENESIS_HASH, prevSeq: 0 },
    opts: { allowGaps?: boolean; watch?: Iterable<number>; linked?: boolean } = {},
  ) {
    this.prevHash = start.prevHash;
    this.prevSeq = start.prevSeq;
    this.allowGaps = opts.allowGaps ?? false;
    this.linked = opts.linked ?? false;
    this.watch = new Set(opts.watch ?? []);
  }

  /**
   * Returns false once the chain is broken. With allowGaps (a filtered export), a record after
   * a gap is checked against its own content only; every contiguous pair is still linked.
   */
  push(r: ChainRecord): boolean {
    if (this.failure) return false;
    const problem = this.linked ? this.linkProblem(r) : this.stepProblem(r);
    if (problem) {
      this.failure = problem;
      return false;
    }
    this.count++;
    if (this.watch.has(r.seq)) {
      this.hashes.set(r.seq, r.hash);
      this.counts.set(r.seq, this.count);
    }
    this.prevHash = r.hash;
    this.prevSeq = r.seq;
    return true;
  }

  /** The one chain: seq steps by one from the start; the first record links to the genesis hash. */
  private stepProblem(r: ChainRecord): { badSeq: number; problem: string } | null {
    const expected = this.prevSeq + 1;
    const gap = this.allowGaps && Number.isInteger(r.seq) && r.seq > expected;
    const problem =
      r.seq !== expected && !gap
        ? r.seq > expected
          ? `seq ${expected} is missing (found ${r.seq})`
          : `expected seq ${expected}, found ${r.seq}`
        : !gap && r.prev_hash !== this.prevHash
          ? "prev_hash does not match the previous record's hash"
          : r.seq === 1 && r.prev_hash !== GENESIS_HASH
            ? "the first record does not start from the genesis hash"
            : !hashMatches(r)
              ? "hash does not match the record's content"
              : null;
    return problem ? { badSeq: r.seq !== expected && !gap && r.seq < expected ? expected : gap ? r.seq : expected, problem } : null;
  }

  /**
   * One of several chains: the seq must be above the last; prev_hash must be the last record's
   * hash (a record removed or inserted anywhere breaks it), the first one's the genesis hash. In
   * a filtered export a record that does not link is checked on its own.
   */
  private linkProblem(r: ChainRecord): { badSeq: number; problem: string } | null {
    const seq = r.seq;
    if (!Number.isSafeInteger(seq) || seq <= this.prevSeq) return { badSeq: Number.isSafeInteger(seq) ? seq : this.prevSeq + 1, problem: `expected a seq above ${this.prevSeq}, found ${seq}` };
    if (r.prev_hash !== this.prevHash && !this.allowGaps) {
      return { badSeq: seq, problem: this.count === 0 ? "the first record of its chain does not start from the genesis hash" : "prev_hash does not match the previous record's hash" };
    }
    if (!hashMatches(r)) return { badSeq: seq, problem: "hash does not match the record's content" };
    return null;
  }

  verdict(): ChainVerdict {
    if (this.failure) return { ok: false, count: this.count, ...this.failure };
    return { ok: true, count: this.count, head: this.prevHash, lastSeq: this.prevSeq };
  }
}

export function verifyChain(records: Iterable<ChainRecord>, start?: { prevHash: string; prevSeq: number }): ChainVerdict {
  const v = new ChainVerifier(start);
  for (const r of records) if (!v.push(r)) break;
  return v.verdict();
}
