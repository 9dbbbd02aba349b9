import { checkpointSignatureValid, headsProblem, pinnedKeyProblem, type Checkpoint } from "./checkpoint";
import type { ChainVerdict } from "./hash";

export type CheckpointVerdict = { ok: true; size: number } | { ok: false; problem: string; badSeq?: number };

/**
 * Holds a verified chain against signed checkpoints (sorted by size). A chain shorter than a
 * checkpoint was truncated; a different hash at a checkpoint's size means the chain was
 * rewritten at or before it, after the previous checkpoint that still matches. With a pinned key
 * (`ed25519:…`), a checkpoint signed by any other key fails, naming that key's fingerprint:
 * whoever can rewrite the chain can also sign a new checkpoint with a key of their own.
 */
export function checkAgainstCheckpoints(
  verdict: ChainVerdict,
  hashes: Map<number, string>,
  checkpoints: Checkpoint[],
  pinnedKey?: string,
  /** With several chains: how many records a chain held at each watched seq (MultiChainVerifier.counts). */
  counts?: Map<number, number>,
): CheckpointVerdict[] {
  const sorted = [...checkpoints].sort((a, b) => a.size - b.size);
  let lastGood = 0;
  const lastGoodOf = new Map<number, number>();
  return sorted.map((c) => {
    const wrongKey = pinnedKeyProblem(c, pinnedKey);
    if (wrongKey) return { ok: false, problem: wrongKey };
    if (!checkpointSignatureValid(c)) return { ok: false, problem: `the checkpoint at size ${c.size} has an invalid signature` };
    const badHeads = headsProblem(c);
    if (badHeads) return { ok: false, problem: badHeads };
    if (!verdict.ok) return { ok: false, problem: "the chain itself is broken", badSeq: verdict.badSeq };
    if (c.heads) return againstHeads(verdict, hashes, counts, c, c.heads, lastGoodOf);
    if (verdict.chains) return { ok: false, problem: `the checkpoint at size ${c.size} is of one chain, but this database has ${verdict.chains.length}` };
    if (verdict.lastSeq < c.size) {
      return { ok: false, problem: `truncated: the chain ends at seq ${verdict.lastSeq}, but a checkpoint signed at ${c.time} covers ${c.size} records`, badSeq: verdict.lastSeq + 1 };
    }
    const h = hashes.get(c.size);
    if (h === undefined) return { ok: false, problem: `seq ${c.size} is not in this file: the checkpoint cannot be checked against it` };
    if (h !== c.head) {
      return { ok: false, problem: `rewritten: seq ${c.size} does not match the checkpoint signed at ${c.time}; the first changed record is between seq ${lastGood + 1} and ${c.size}`, badSeq: lastGood + 1 };
    }
    lastGood = c.size;
    return { ok: true, size: c.size };
  });
}

/** A version 2 checkpoint: every chain must reach its head, with the hash the checkpoint names there. */
function againstHeads(
  verdict: Extract<ChainVerdict, { ok: true }>,
  hashes: Map<number, string>,
  counts: Map<number, number> | undefined,
  c: Checkpoint,
  heads: { seq: number; hash: string; records: number }[],
  lastGoodOf: Map<number, number>,
): CheckpointVerdict {
  const ends = verdict.chains;
  if (!ends || ends.length !== heads.length) {
    return { ok: false, problem: `the checkpoint at size ${c.size} covers ${heads.length} chains, but the records were read as ${ends?.length ?? 1}` };
  }
  for (const [i, h] of heads.entries()) {
    if (h.seq === 0) continue;
    if (ends[i].lastSeq < h.seq) {
      return {
        ok: false,
        problem: `truncated: chain ${i} ends at seq ${ends[i].lastSeq}, but a checkpoint signed at ${c.time} covers it up to seq ${h.seq}`,
        badSeq: ends[i].lastSeq + 1,
      };
    }
    const found = hashes.get(h.seq);
    if (found === undefined) return { ok: false, problem: `seq ${h.seq} (chain ${i}) is not in this file: the checkpoint cannot be checked against it` };
    const held = counts?.get(h.seq);
    if (found !== h.hash || (held !== undefined && held !== h.records)) {
      const from = lastGoodOf.get(i) ?? 0;
      const what = found !== h.hash ? `seq ${h.seq} does not match` : `chain ${i} holds ${held} records up to seq ${h.seq}, not the ${h.records} of`;
      return {
        ok: false,
        problem: `rewritten: chain ${i}: ${what} the checkpoint signed at ${c.time}; the first changed record of that chain is after seq ${from} and at or before ${h.seq}`,
        badSeq: from + 1,
      };
    }
  }
  for (const [i, h] of heads.entries()) if (h.seq) lastGoodOf.set(i, h.seq);
  return { ok: true, size: c.size };
}
