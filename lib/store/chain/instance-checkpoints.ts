import "server-only";
import { checkAgainstCheckpoints, type CheckpointVerdict } from "@/lib/domain/audit-verify";
import { createCheckpoint, type Checkpoint } from "@/lib/domain/checkpoint";
import type { ChainVerdict } from "@/lib/domain/hash";
import { checkpointEvery, signingKey } from "./checkpoints";
import { lockInstanceChain, verifyInstanceChain } from "./instance-chain";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";
import { inProject } from "../db/project-context";
import { announceChainFailure, chainFailure } from "../work/webhook-outbox";
import { instanceReader, instanceWriteTransaction } from "../db/db";
import { asSql, placeholder } from "../db/sql";

/**
 * Signed checkpoints of the instance's trail (instance_checkpoints): its size and head signed by
 * the instance's checkpoint key, on the same cadence as a project's (RECONCILE_CHECKPOINT_EVERY),
 * so that a trail cut short, or rewritten whole by someone who can write the database, fails
 * `audit:verify --instance` and the Security log's Verify against a signature they cannot make.
 */

type Row = { size: number | bigint; head: string; time: string; key: string; signature: string };
const toCheckpoint = (r: Row): Checkpoint => ({ size: Number(r.size), head: r.head, time: r.time, key: r.key, signature: r.signature });
const COLUMNS = "size, head, time, key, signature";

export async function instanceCheckpoints(): Promise<Checkpoint[]> {
  return (await asSql(await instanceReader()).all<Row>(`SELECT ${COLUMNS} FROM instance_checkpoints ORDER BY size`)).map(toCheckpoint);
}

export async function latestInstanceCheckpoint(): Promise<Checkpoint | null> {
  const [row] = await asSql(await instanceReader()).all<Row>(`SELECT ${COLUMNS} FROM instance_checkpoints ORDER BY size DESC LIMIT 1`);
  return row ? toCheckpoint(row) : null;
}

/** Signs the trail's current head, unless the latest checkpoint already covers it (null then, or when the trail is empty). */
export async function writeInstanceCheckpoint(): Promise<Checkpoint | null> {
  const signer = signingKey();
  return instanceWriteTransaction(async (tx) => {
    // The trail's lock: the head signed is the head at commit, and two instances sign it once.
    await lockInstanceChain(tx);
    const sql = asSql(tx);
    const [head] = await sql.all<{ seq: number | bigint; hash: string }>("SELECT seq, hash FROM instance_events ORDER BY seq DESC LIMIT 1");
    if (!head) return null;
    const [last] = await sql.all<{ size: number | bigint }>("SELECT size FROM instance_checkpoints ORDER BY size DESC LIMIT 1");
    if (last && Number(last.size) >= Number(head.seq)) return null;
    const c = createCheckpoint(signer, Number(head.seq), head.hash);
    const p = placeholder;
    await sql.run(`INSERT INTO instance_checkpoints (${COLUMNS}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)})`, [c.size, c.head, c.time, c.key, c.signature]);
    return c;
  });
}

let checkedAt = 0;

/**
 * Signs a checkpoint when RECONCILE_CHECKPOINT_EVERY records or time have passed since the last
 * (as maybeCheckpoint does for a project). Called by the server's watch of its projects every
 * few seconds and by the Security log page; looks at most every 2 s unless forced; never throws.
 */
export async function maybeInstanceCheckpoint(force = false): Promise<void> {
  if (!force && Date.now() - checkedAt < 2_000) return;
  checkedAt = Date.now();
  try {
    const due = checkpointEvery();
    const sql = asSql(await instanceReader());
    const [head] = await sql.all<{ seq: number | bigint }>("SELECT seq FROM instance_events ORDER BY seq DESC LIMIT 1");
    if (!head) return;
    const last = await latestInstanceCheckpoint();
    const behind = Number(head.seq) - (last?.size ?? 0);
    const age = last ? Date.now() - Date.parse(last.time) : Infinity;
    if (behind >= due.records || (behind > 0 && age >= due.ms)) await writeInstanceCheckpoint();
  } catch (e) {
    console.error("the instance trail's checkpoint failed (the trail itself is unaffected):", e);
  }
}

/**
 * The whole check of the trail: every link from the genesis hash, then every stored checkpoint
 * (its signature, by `pinnedKey` only when given, and the hash at its size). `problem` is the
 * first failure in words, or null; with `announceAs` (who verified), a failure is announced.
 */
export async function verifyInstanceTrail(opts: { pinnedKey?: string; onProgress?: (checked: number) => void; announceAs?: string } = {}): Promise<{
  verdict: ChainVerdict;
  checkpoints: Checkpoint[];
  checks: CheckpointVerdict[];
  problem: string | null;
}> {
  // Read before the walk, which reads the head after them: every checkpoint lies within what it checks.
  const checkpoints = await instanceCheckpoints();
  const { verdict, hashes } = await verifyInstanceChain({ watch: checkpoints.map((c) => c.size), onProgress: opts.onProgress });
  const checks = checkAgainstCheckpoints(verdict, hashes, checkpoints, opts.pinnedKey);
  const bad = checks.find((c) => !c.ok);
  const problem = !verdict.ok ? `broken at seq ${verdict.badSeq}: ${verdict.problem}` : bad && !bad.ok ? bad.problem : null;
  // Someone should hear of it without looking: chain.verification_failed to the endpoints of the
  // default project, whose database the trail shares (WEBHOOKS.md), saying it is the instance's.
  if (problem && opts.announceAs !== undefined) await inProject(DEFAULT_PROJECT, () => announceChainFailure(chainFailure(verdict, bad), opts.announceAs!, "instance"));
  return { verdict, checkpoints, checks, problem };
}
