import { createHash, sign, verify, createPublicKey, type KeyObject } from "node:crypto";
import { ChainVerifier, GENESIS_HASH, type ChainRecord } from "./hash";
import { publicKeyText } from "./checkpoint";

/*
 * An archive segment (docs/DEPLOY.md "Retention and archive"): a contiguous run of one
 * chain's records, sealed out of the database. Two objects side by side:
 *
 *   {project}/{chain}/{first_seq}-{last_seq}.ndjson.gz        the export's NDJSON lines, gzipped
 *   {project}/{chain}/{first_seq}-{last_seq}.checkpoint.json  the segment's signed checkpoint
 *
 * The checkpoint signs {project, chain, first_seq, last_seq, head_hash_at_last_seq,
 * prev_segment_head} with the instance's checkpoint key, plus how many records the segment holds
 * and the SHA-256 of its NDJSON (so the body cannot be swapped for another that links the same
 * way), and when it was sealed. prev_segment_head is the hash the segment's first record links
 * to: the previous segment's head, or the genesis hash for the chain's first segment, so the
 * segments and then the live chain link end to end.
 */

/** Projects do not exist yet (issue 38 part 1): every segment is the default project's. */
export const DEFAULT_PROJECT = "default";

export type SegmentFields = {
  project: string;
  chain: number;
  first_seq: number;
  last_seq: number;
  head_hash_at_last_seq: string;
  prev_segment_head: string;
  records: number;
  /** SHA-256 (hex) of the segment's NDJSON, before compression. */
  ndjson_sha256: string;
  sealed_at: string;
};

export type SegmentCheckpoint = SegmentFields & { format: "reconcile-segment v1"; key: string; signature: string };

const PROJECT = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Where a segment's two objects live under the archive's root. */
export function segmentKeys(s: Pick<SegmentFields, "project" | "chain" | "first_seq" | "last_seq">): { body: string; checkpoint: string } {
  if (!PROJECT.test(s.project)) throw new Error(`segmentKeys: ${JSON.stringify(s.project)} is no project slug`);
  const base = `${s.project}/${s.chain}/${s.first_seq}-${s.last_seq}`;
  return { body: `${base}.ndjson.gz`, checkpoint: `${base}.checkpoint.json` };
}

/** Reads a checkpoint object's name back: its chain and seq range (null: not a segment checkpoint of this project). */
export function parseCheckpointKey(project: string, key: string): { chain: number; first_seq: number; last_seq: number } | null {
  const m = /^([^/]+)\/(\d{1,2})\/(\d{1,15})-(\d{1,15})\.checkpoint\.json$/.exec(key);
  if (!m || m[1] !== project) return null;
  return { chain: Number(m[2]), first_seq: Number(m[3]), last_seq: Number(m[4]) };
}

/** The text signed: one field a line, in a fixed order, with a final newline. */
export function segmentSignedText(f: SegmentFields): string {
  return (
    [
      "reconcile-segment v1",
      `project: ${f.project}`,
      `chain: ${f.chain}`,
      `first_seq: ${f.first_seq}`,
      `last_seq: ${f.last_seq}`,
      `head_hash_at_last_seq: ${f.head_hash_at_last_seq}`,
      `prev_segment_head: ${f.prev_segment_head}`,
      `records: ${f.records}`,
      `ndjson_sha256: ${f.ndjson_sha256}`,
      `sealed_at: ${f.sealed_at}`,
    ].join("\n") + "\n"
  );
}

export function signSegment(privateKey: KeyObject, f: SegmentFields): SegmentCheckpoint {
  const signature = sign(null, Buffer.from(segmentSignedText(f)), privateKey).toString("base64");
  return { format: "reconcile-segment v1", ...f, key: publicKeyText(privateKey), signature };
}

/** The NDJSON of a segment's records: the export's lines. */
export function segmentNdjson(records: ChainRecord[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}

export const sha256 = (text: string | Buffer): string => createHash("sha256").update(text).digest("hex");

/** A checkpoint object's JSON, parsed and shape-checked (null: it is not one). */
export function parseSegmentCheckpoint(text: string): SegmentCheckpoint | null {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const hex = (x: unknown) => typeof x === "string" && /^[0-9a-f]{64}$/.test(x);
  const seq = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 1;
  if (!v || typeof v !== "object" || v.format !== "reconcile-segment v1") return null;
  if (typeof v.project !== "string" || !PROJECT.test(v.project) || !Number.isInteger(v.chain) || (v.chain as number) < 0) return null;
  if (!seq(v.first_seq) || !seq(v.last_seq) || (v.last_seq as number) < (v.first_seq as number) || !seq(v.records)) return null;
  if (!hex(v.head_hash_at_last_seq) || !hex(v.prev_segment_head) || !hex(v.ndjson_sha256)) return null;
  if (typeof v.sealed_at !== "string" || typeof v.key !== "string" || typeof v.signature !== "string") return null;
  return v as unknown as SegmentCheckpoint;
}

export function segmentSignatureValid(c: SegmentCheckpoint, pinnedKey?: string): boolean {
  if (pinnedKey && pinnedKey !== c.key) return false;
  try {
    if (!c.key.startsWith("ed25519:")) return false;
    const key = createPublicKey({ key: Buffer.from(c.key.slice(8), "base64"), format: "der", type: "spki" });
    return verify(null, Buffer.from(segmentSignedText(c)), key, Buffer.from(c.signature, "base64"));
  } catch {
    return false;
  }
}

/**
 * Why a segment's NDJSON does not match its checkpoint (null: it does). `linked`: the chain is
 * one of several (its seqs rise with gaps); otherwise seqs step by one. `prevHead`, when known,
 * is the head the segment must continue from (the previous segment's, or the genesis hash).
 */
export function segmentProblem(c: SegmentCheckpoint, ndjson: string, opts: { linked: boolean; prevHead?: string; pinnedKey?: string }): string | null {
  const name = `segment ${c.chain}/${c.first_seq}-${c.last_seq}`;
  if (!segmentSignatureValid(c, opts.pinnedKey)) return `${name}: its checkpoint's signature is not valid${opts.pinnedKey ? " for the pinned key" : ""}`;
  if (sha256(ndjson) !== c.ndjson_sha256) return `${name}: its records are not the ones its checkpoint signs (SHA-256 differs)`;
  if (opts.prevHead !== undefined && c.prev_segment_head !== opts.prevHead) return `${name}: it does not continue from the head before it`;
  if (c.first_seq === 1 && c.prev_segment_head !== GENESIS_HASH) return `${name}: a chain's first segment must start from the genesis hash`;
  const records = readRecords(ndjson);
  if (typeof records === "string") return `${name}: ${records}`;
  if (records.length !== c.records) return `${name}: holds ${records.length} records, its checkpoint says ${c.records}`;
  if (!records.length || records[0].seq !== c.first_seq || records[records.length - 1].seq !== c.last_seq) return `${name}: its records do not run from seq ${c.first_seq} to ${c.last_seq}`;
  const v = new ChainVerifier({ prevHash: c.prev_segment_head, prevSeq: c.first_seq - 1 }, { linked: opts.linked });
  for (const r of records) if (!v.push(r)) break;
  const verdict = v.verdict();
  if (!verdict.ok) return `${name}: broken at seq ${verdict.badSeq}: ${verdict.problem}`;
  if (verdict.head !== c.head_hash_at_last_seq) return `${name}: its last record's hash is not the head its checkpoint signs`;
  return null;
}

/** The records of a segment's NDJSON, or why they cannot be read. */
export function readRecords(ndjson: string): ChainRecord[] | string {
  const out: ChainRecord[] = [];
  for (const [i, line] of ndjson.split("\n").entries()) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as ChainRecord);
    } catch {
      return `line ${i + 1} is not JSON`;
    }
  }
  return out;
}
