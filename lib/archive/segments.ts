import { gunzipSync, gzipSync } from "node:zlib";
import type { KeyObject } from "node:crypto";
import {
  parseCheckpointKey,
  parseSegmentCheckpoint,
  readRecords,
  segmentKeys,
  segmentNdjson,
  segmentProblem,
  sha256,
  signSegment,
  type SegmentCheckpoint,
} from "@/lib/domain/archive-segment";
import { GENESIS_HASH, type ChainRecord } from "@/lib/domain/hash";
import type { ArchiveTarget } from "./targets";

export type WrittenSegment = { checkpoint: SegmentCheckpoint; location: string; checkpointLocation: string; /** SHA-256 of the gzipped object, as stored. */ sha256: string };

/**
 * Writes one segment (its NDJSON gzipped, then its signed checkpoint), reads both back and
 * verifies them; throws unless what is stored is exactly what was meant. Writing the same
 * segment again (a seal retried after a crash before its delete) writes identical records and a
 * fresh checkpoint over them: harmless.
 */
export async function writeSegment(
  target: ArchiveTarget,
  records: ChainRecord[],
  meta: { project: string; chain: number; prevHead: string; linked: boolean; signer: KeyObject; sealedAt?: string },
): Promise<WrittenSegment> {
  if (!records.length) throw new Error("writeSegment: no records");
  const ndjson = segmentNdjson(records);
  const fields = {
    project: meta.project,
    chain: meta.chain,
    first_seq: records[0].seq,
    last_seq: records[records.length - 1].seq,
    head_hash_at_last_seq: records[records.length - 1].hash,
    prev_segment_head: meta.prevHead,
    records: records.length,
    ndjson_sha256: sha256(ndjson),
    sealed_at: meta.sealedAt ?? new Date().toISOString(),
  };
  const checkpoint = signSegment(meta.signer, fields);
  // Before anything is written: a segment that would not verify is never stored.
  const problem = segmentProblem(checkpoint, ndjson, { linked: meta.linked, prevHead: meta.prevHead });
  if (problem) throw new Error(`archive: refusing to write ${problem}`);
  const keys = segmentKeys(fields);
  const body = gzipSync(ndjson);
  await target.put(keys.body, body);
  await target.put(keys.checkpoint, Buffer.from(JSON.stringify(checkpoint, null, 2) + "\n"));
  // Read back: what the database deletes must be what the archive holds.
  const back = await readSegment(target, keys.checkpoint, { linked: meta.linked, prevHead: meta.prevHead });
  if (back.checkpoint.signature !== checkpoint.signature || back.ndjson !== ndjson) throw new Error(`archive: ${target.locationOf(keys.body)} read back differs from what was written`);
  return { checkpoint, location: target.locationOf(keys.body), checkpointLocation: target.locationOf(keys.checkpoint), sha256: sha256(body) };
}

/** One segment read and verified by its checkpoint's key; throws with the reason otherwise. */
export async function readSegment(
  target: ArchiveTarget,
  checkpointKey: string,
  opts: { linked: boolean; prevHead?: string; pinnedKey?: string },
): Promise<{ checkpoint: SegmentCheckpoint; ndjson: string; records: ChainRecord[] }> {
  const text = await target.get(checkpointKey);
  if (!text) throw new Error(`archive: ${target.locationOf(checkpointKey)} is missing`);
  const checkpoint = parseSegmentCheckpoint(text.toString("utf8"));
  if (!checkpoint) throw new Error(`archive: ${target.locationOf(checkpointKey)} is no segment checkpoint`);
  const keys = segmentKeys(checkpoint);
  if (keys.checkpoint !== checkpointKey) throw new Error(`archive: ${target.locationOf(checkpointKey)} names another segment (${keys.checkpoint})`);
  const gz = await target.get(keys.body);
  if (!gz) throw new Error(`archive: ${target.locationOf(keys.body)} is missing`);
  let ndjson: string;
  try {
    ndjson = gunzipSync(gz).toString("utf8");
  } catch {
    throw new Error(`archive: ${target.locationOf(keys.body)} is not gzip`);
  }
  const problem = segmentProblem(checkpoint, ndjson, opts);
  if (problem) throw new Error(`archive: ${problem}`);
  return { checkpoint, ndjson, records: readRecords(ndjson) as ChainRecord[] };
}

/** A chain's segments in the archive, in seq order (by their checkpoints' names). */
export async function listSegments(target: ArchiveTarget, project: string, chain: number): Promise<{ key: string; first_seq: number; last_seq: number }[]> {
  const keys = await target.list(`${project}/${chain}/`);
  return keys
    .map((key) => ({ key, at: parseCheckpointKey(project, key) }))
    .filter((k) => k.at !== null)
    .map((k) => ({ key: k.key, first_seq: k.at!.first_seq, last_seq: k.at!.last_seq }))
    .sort((a, b) => a.first_seq - b.first_seq);
}

/**
 * Walks a chain's segments from its start, each linked to the one before (the first to the
 * genesis hash): yields each segment's verified records. Throws at the first gap or bad segment.
 */
export async function* walkSegments(
  target: ArchiveTarget,
  project: string,
  chain: number,
  opts: { linked: boolean; pinnedKey?: string },
): AsyncGenerator<{ checkpoint: SegmentCheckpoint; records: ChainRecord[] }> {
  let prevHead = GENESIS_HASH;
  let prevLast = 0;
  for (const s of await listSegments(target, project, chain)) {
    if (s.first_seq <= prevLast) throw new Error(`archive: segment ${chain}/${s.first_seq}-${s.last_seq} overlaps the one before (through seq ${prevLast})`);
    const seg = await readSegment(target, s.key, { linked: opts.linked, prevHead, pinnedKey: opts.pinnedKey });
    yield { checkpoint: seg.checkpoint, records: seg.records };
    prevHead = seg.checkpoint.head_hash_at_last_seq;
    prevLast = seg.checkpoint.last_seq;
  }
}
