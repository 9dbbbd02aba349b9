import { createHash } from "node:crypto";
import { ChainVerifier, GENESIS_HASH, type ChainEnd, type ChainRecord, type ChainVerdict } from "./hash";
import { NUMERIC_SETTINGS, numericSetting } from "./settings";

/*
 * Several hash chains in one seq space (issue 17, docs/DEPLOY.md). A database has N chains,
 * fixed when it is created and recorded in it. An operation's records all go to one chain,
 * chosen by a stable hash of its id (chainOf); records of no operation (security events) go to
 * chain 0. Each chain links its own records from the genesis hash without a gap: every record's
 * prev_hash is the previous record of its chain, and each chain counts its records. With N = 1
 * it is exactly the one chain of before (seq 1, 2, 3, …).
 *
 * Seqs stay unique across all chains and keep the order of time: they come from one counter that
 * chains take from without waiting on each other (a PostgreSQL sequence; on SQLite, whose writes
 * are serial anyway, the next after the highest). A record appended after another has the higher
 * seq, whatever their chains; lists (newest first), trajectories and recovery (a *later*
 * operation) rest on that order. So one chain's seqs rise with gaps where other chains' records
 * are. A checkpoint signs the Merkle root of every chain's head: its last seq, how many records
 * it holds, and that record's hash.
 */

/** The most chains a database may have (RECONCILE_CHAINS). */
export const MAX_CHAINS = NUMERIC_SETTINGS.RECONCILE_CHAINS.max;

/** The chain an operation's records go to: the first four bytes of SHA-256(id), modulo n. */
export function chainOf(operationId: string | null, n: number): number {
  if (n <= 1 || operationId === null) return 0;
  return createHash("sha256").update(operationId, "utf8").digest().readUInt32BE(0) % n;
}

/** The chain a record belongs to: its operation's, or chain 0 (a value that is no id, in a damaged file, too). */
export const chainOfRecord = (r: { operation_id?: unknown }, n: number): number => chainOf(typeof r.operation_id === "string" ? r.operation_id : null, n);

/** Parses RECONCILE_CHAINS: an integer 1–64, default 1 (settings.ts). Throws with the reason otherwise. */
export function parseChainCount(text: string | undefined): number {
  return numericSetting("RECONCILE_CHAINS", text);
}

/** One chain's head as a checkpoint names it: its last seq and hash, and how many records it holds (0, 0 and the genesis hash when empty). */
export type ChainHead = { seq: number; hash: string; records: number };

export const EMPTY_HEAD: ChainHead = { seq: 0, hash: GENESIS_HASH, records: 0 };

const sha = (...parts: (string | Buffer)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};

/** The Merkle leaf of chain c's head: SHA-256(0x00 ‖ "c seq records hash"), RFC 6962's leaf prefix. */
export function headLeaf(c: number, head: ChainHead): Buffer {
  return sha(Buffer.from([0]), `${c} ${head.seq} ${head.records} ${head.hash}`);
}

/**
 * The Merkle root (hex) of the chains' heads, in chain order: RFC 6962's tree hash (a node is
 * SHA-256(0x01 ‖ left ‖ right), split at the largest power of two below the count), so a
 * checkpoint's one root covers every chain and one chain's head can be proved with log N hashes.
 */
export function headsRoot(heads: ChainHead[]): string {
  if (!heads.length) throw new Error("headsRoot: no chains");
  const tree = (from: number, to: number): Buffer => {
    if (to - from === 1) return headLeaf(from, heads[from]);
    let k = 1;
    while (k * 2 < to - from) k *= 2;
    return sha(Buffer.from([1]), tree(from, from + k), tree(from + k, to));
  };
  return tree(0, heads.length).toString("hex");
}

/** How many records the heads cover. */
export const headsSize = (heads: ChainHead[]): number => heads.reduce((sum, h) => sum + h.records, 0);

/**
 * Checks several chains sharing one seq space in one pass over the records in seq order (an
 * export, or the table page by page): each record goes to its chain's own ChainVerifier, which
 * links it to that chain's previous record. With one chain it is a plain ChainVerifier.
 */
export class MultiChainVerifier {
  private readonly chains: ChainVerifier[];
  private failure: ChainVerdict | null = null;
  readonly hashes = new Map<number, string>();
  /** How many records its chain held up to each watched seq. */
  readonly counts = new Map<number, number>();

  constructor(
    readonly n: number,
    opts: { allowGaps?: boolean; watch?: Iterable<number>; /** Where each chain's records continue from (retention: the last sealed head); the genesis hash otherwise. */ starts?: ({ prevHash: string; prevSeq: number } | null)[] } = {},
  ) {
    const watch = [...(opts.watch ?? [])];
    this.chains = Array.from(
      { length: n },
      (_, c) => new ChainVerifier(opts.starts?.[c] ?? { prevHash: GENESIS_HASH, prevSeq: 0 }, { allowGaps: opts.allowGaps, watch, linked: n > 1 }),
    );
  }

  push(r: ChainRecord): boolean {
    if (this.failure) return false;
    const chain = this.chains[chainOfRecord(r, this.n)];
    if (chain.push(r)) {
      const h = chain.hashes.get(r.seq);
      if (h !== undefined) {
        this.hashes.set(r.seq, h);
        this.counts.set(r.seq, chain.counts.get(r.seq)!);
      }
      return true;
    }
    const v = chain.verdict();
    this.failure = v.ok ? null : { ...v, count: this.count() };
    return false;
  }

  private count(): number {
    return this.chains.reduce((sum, c) => sum + c.verdict().count, 0);
  }

  /** Each chain's end (seq 0 and the genesis hash when it has no record). */
  ends(): ChainEnd[] {
    return this.chains.map((chain) => {
      const v = chain.verdict();
      return v.ok && v.count > 0 ? { lastSeq: v.lastSeq, head: v.head, count: v.count } : { lastSeq: 0, head: GENESIS_HASH, count: 0 };
    });
  }

  /** With several chains, `head` is the Merkle root of their heads and `lastSeq` the highest seq. */
  verdict(): ChainVerdict {
    if (this.failure) return this.failure;
    if (this.n === 1) return this.chains[0].verdict();
    const ends = this.ends();
    return {
      ok: true,
      count: this.count(),
      head: headsRoot(ends.map((e) => ({ seq: e.lastSeq, hash: e.head, records: e.count }))),
      lastSeq: Math.max(0, ...ends.map((e) => e.lastSeq)),
      chains: ends,
    };
  }
}
