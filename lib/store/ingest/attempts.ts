import "server-only";
import { randomUUID } from "node:crypto";
import type { AttemptPayload, AttemptRequest } from "@/lib/domain/attempts";
import { isPossibleOperationId } from "@/lib/domain/wire";
import type { OperationAttempt } from "@/lib/views/operation-detail";
import { appendToChain, lockChain, OF_OPERATIONS } from "../chain/chain";
import { maybeCheckpoint } from "../chain/checkpoints";
import type { Db } from "../db/database";
import { reader, writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { selectIn } from "../db/sql";

/**
 * An attempt at an operation as its recorder saw it (lib/domain/attempts.ts): one chained record
 * of kind "attempt", in its own transaction under the chain lock like every act. It changes
 * nothing derived. `mayAdd(ownerId)` decides, once the operation is found, whether this sender
 * may add to it (its owner, or someone whose role lets them add to anyone's).
 */
export async function addAttempt(operationId: string, actor: string, attempt: AttemptRequest, mayAdd: (ownerId: string | null) => boolean): Promise<OperationAttempt> {
  if (!isPossibleOperationId(operationId)) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
  const added = await writeTransaction(async (tx) => {
    await lockChain(tx, [operationId]);
    const op = await tx.operation.findUnique({ where: { operationId }, select: { createdSeq: true, ownerId: true } });
    if (!op) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
    if (!mayAdd(op.ownerId)) throw new StoreError("forbidden", "this operation belongs to another user: only its owner's tokens (or an admin) add its attempts");
    const payload: AttemptPayload = { id: randomUUID(), ...attempt };
    const [record] = await appendToChain(tx, [{ kind: "attempt", operation_id: operationId, actor, payload, op_seq: op.createdSeq }], undefined, { locked: true });
    return toView(payload, actor, Number(record.seq), record.recorded_at, record.hash);
  });
  void maybeCheckpoint();
  return added;
}

function toView(p: AttemptPayload, actor: string | null, seq: number, recordedAt: string, hash: string): OperationAttempt {
  return {
    id: p.id,
    answer: p.answer,
    outcome: p.outcome ?? null,
    text: p.text,
    at: p.at ?? recordedAt,
    session: p.session ?? null,
    client: p.client ?? null,
    recorder: actor,
    seq,
    recorded_at: recordedAt,
    hash,
  };
}

/** An operation's attempts, oldest first. */
export async function attemptsOf(operationId: string, db?: Db): Promise<OperationAttempt[]> {
  // `kind || ''`: an expression, so that SQLite plans on (op_seq, seq), not on (kind, seq) (as comments.ts).
  const rows = await selectIn<{ seq: number | bigint; actor: string | null; recorded_at: string; payload: string; hash: string }>(
    db ?? (await reader()),
    `SELECT seq, actor, recorded_at, payload, hash FROM chain_records WHERE kind || '' = 'attempt' AND ${OF_OPERATIONS} ORDER BY seq`,
    [operationId],
  );
  return rows.map((r) => toView(JSON.parse(r.payload) as AttemptPayload, r.actor, Number(r.seq), r.recorded_at, r.hash));
}

/** An operation's attempts, or null when there is no such operation. */
export async function listAttempts(operationId: string): Promise<OperationAttempt[] | null> {
  if (!isPossibleOperationId(operationId)) return null;
  const db = await reader();
  if (!(await db.operation.findUnique({ where: { operationId }, select: { operationId: true } }))) return null;
  return attemptsOf(operationId, db);
}
