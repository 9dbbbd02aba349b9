import { checkpointSignatureValid, pinnedKeyProblem, type Checkpoint } from "./checkpoint";
import type { ChainVerdict } from "./hash";

export type CheckpointVerdict = { ok: true; size: number } | { ok: false; problem: string; badSeq?: number };

/**
 * Holds a verified chain against signed checkpoints (sorted by size). A chain shorter than a
 * checkpoint was truncated; a different hash at a checkpoint's size means the chain was
 * rewritten at or before it, after the previous checkpoint that still matches. With a pinned key
 * (`ed25519:…`), a checkpoint signed by any other key fails, naming that key's fingerprint:
 * whoever can rewrite the chain can also sign a new checkpoint with a key of their own.
 */
export function checkAgainstCheckpoints(verdict: ChainVerdict, hashes: Map<number, string>, checkpoints: Checkpoint[], pinnedKey?: string): CheckpointVerdict[] {
  const sorted = [...checkpoints].sort((a, b) => a.size - b.size);
  let lastGood = 0;
  return sorted.map((c) => {
    const wrongKey = pinnedKeyProblem(c, pinnedKey);
    if (wrongKey) return { ok: false, problem: wrongKey };
    if (!checkpointSignatureValid(c)) return { ok: false, problem: `the checkpoint at size ${c.size} has an invalid signature` };
    if (!verdict.ok) return { ok: false, problem: "the chain itself is broken", badSeq: verdict.badSeq };
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
