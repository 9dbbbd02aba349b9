import "server-only";
import { randomUUID } from "node:crypto";
import type { CommentPayload } from "@/lib/domain/comments";
import { isPossibleOperationId } from "@/lib/domain/wire";
import type { OperationComment } from "@/lib/views/operation-detail";
import { appendToChain, lockChain, OF_OPERATIONS } from "../chain/chain";
import { maybeCheckpoint } from "../chain/checkpoints";
import type { Db } from "../db/database";
import { reader, writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { selectIn } from "../db/sql";

/**
 * A reviewer's note on an operation: one chained record (kind "comment"), in its own
 * transaction under the chain lock like every act. It changes nothing derived.
 */
export async function addComment(operationId: string, author: string, text: string): Promise<OperationComment> {
  if (!isPossibleOperationId(operationId)) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
  const comment = await writeTransaction(async (tx) => {
    await lockChain(tx, [operationId]);
    const op = await tx.operation.findUnique({ where: { operationId }, select: { createdSeq: true } });
    if (!op) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
    const payload: CommentPayload = { id: randomUUID(), text };
    const [record] = await appendToChain(tx, [{ kind: "comment", operation_id: operationId, actor: author, payload, op_seq: op.createdSeq }], undefined, {
      locked: true,
    });
    return { id: payload.id, text, author, seq: record.seq, recorded_at: record.recorded_at, hash: record.hash };
  });
  void maybeCheckpoint();
  return comment;
}

/** An operation's notes, oldest first. */
export async function commentsOf(operationId: string, db?: Db): Promise<OperationComment[]> {
  // `kind || ''`: an expression, so that SQLite plans on (op_seq, seq), not on (kind, seq) (see stage-records.ts).
  const rows = await selectIn<{ seq: number | bigint; actor: string | null; recorded_at: string; payload: string; hash: string }>(
    db ?? (await reader()),
    `SELECT seq, actor, recorded_at, payload, hash FROM chain_records WHERE kind || '' = 'comment' AND ${OF_OPERATIONS} ORDER BY seq`,
    [operationId],
  );
  return rows.map((r) => {
    const p = JSON.parse(r.payload) as CommentPayload;
    return { id: p.id, text: p.text, author: r.actor, seq: Number(r.seq), recorded_at: r.recorded_at, hash: r.hash };
  });
}

/** An operation's notes, or null when there is no such operation. */
export async function listComments(operationId: string): Promise<OperationComment[] | null> {
  if (!isPossibleOperationId(operationId)) return null;
  const db = await reader();
  if (!(await db.operation.findUnique({ where: { operationId }, select: { operationId: true } }))) return null;
  return commentsOf(operationId, db);
}
