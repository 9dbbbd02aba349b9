import "server-only";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { appendToChain, lockChain, OF_OPERATIONS } from "../chain/chain";
import type { Db, Tx } from "../db/database";
import { reader, writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { selectIn } from "../db/sql";

/**
 * Who is working on which operation in the review queue. Claiming, releasing and taking over
 * are records in the chain (kind "assignment"), like everything else a person does; the
 * current holder is the latest of them.
 *
 * A claim means something (docs/API.md "Claims (the review queue)"): only its holder or an
 * admin releases it, and nobody else corrects the operation while it is held: everyone else
 * (admins included) takes it over first, which is itself a record naming whom it was taken from.
 */
type AssignmentPayload = { action: "claim" | "release"; assignee: string | null; previous: string | null };

export async function currentAssignees(db: Db | Tx, operationIds: string[]): Promise<Map<string, string>> {
  const rows = await selectIn<{ operation_id: string; kind: string; payload: string }>(
    db,
    // Filtered by kind in code so that SQLite uses the (op_seq, seq) index (see stage-records.ts).
    `SELECT operation_id, kind, payload FROM chain_records WHERE ${OF_OPERATIONS} ORDER BY seq`,
    operationIds,
  );
  const out = new Map<string, string>();
  for (const r of rows) {
    if (r.kind !== "assignment") continue;
    const p = JSON.parse(r.payload) as AssignmentPayload;
    if (p.action === "claim" && p.assignee) out.set(r.operation_id, p.assignee);
    else out.delete(r.operation_id);
  }
  return out;
}

/** At most this many operations in "assigned to me" (a person holds a few at a time; the list filter binds them as parameters). */
export const MAX_HELD = 500;

/**
 * The operations `who` holds now, newest claim first. One pass over the assignment records
 * (claims, releases and take-overs: a few per reviewed operation, never per ingested one),
 * the latest record of each operation deciding.
 */
export async function heldBy(who: string): Promise<string[]> {
  const rows = await (await reader()).chainRecord.findMany({ where: { kind: "assignment" }, orderBy: { seq: "desc" }, select: { operationId: true, payload: true } });
  const seen = new Set<string>();
  const held: string[] = [];
  for (const r of rows) {
    if (!r.operationId || seen.has(r.operationId)) continue;
    seen.add(r.operationId);
    const p = JSON.parse(r.payload) as AssignmentPayload;
    if (p.action === "claim" && p.assignee === who) held.push(r.operationId);
    if (held.length === MAX_HELD) break;
  }
  return held;
}

export async function assigneesOf(operationIds: string[]): Promise<Map<string, string>> {
  return currentAssignees(await reader(), operationIds);
}

/** The holder of one operation (null: nobody), or undefined when there is no such operation. */
export async function claimHolder(operationId: string): Promise<string | null | undefined> {
  if (!isPossibleOperationId(operationId)) return undefined;
  const db = await reader();
  if (!(await db.operation.findUnique({ where: { operationId }, select: { operationId: true } }))) return undefined;
  return (await currentAssignees(db, [operationId])).get(operationId) ?? null;
}

/** The refusal for acting on an operation someone else holds; details name the holder. */
export function claimedByOther(operationId: string, holder: string, message: string): StoreError {
  return new StoreError("claimed_by_other", message, { operation_id: operationId, holder });
}

/**
 * Refuses (claimed_by_other) when someone other than `who` holds the operation. Call it
 * inside the writing transaction, after lockChain: the holder read is then the holder at commit.
 */
export async function requireNotClaimedByOther(tx: Tx, operationId: string, who: string): Promise<string | null> {
  const holder = (await currentAssignees(tx, [operationId])).get(operationId) ?? null;
  if (holder && holder !== who) throw claimedByOther(operationId, holder, `this operation is claimed by ${holder}: take it over before you correct it`);
  return holder;
}

/** The record that releases `holder`'s claim, appended by `who` (a correction releases its claim). */
export function releaseRecord(operationId: string, who: string, holder: string) {
  const payload: AssignmentPayload = { action: "release", assignee: null, previous: holder };
  return { kind: "assignment" as const, operation_id: operationId, actor: who, payload };
}

async function requireOperation(tx: Tx, operationId: string): Promise<void> {
  if (!isPossibleOperationId(operationId) || !(await tx.operation.findUnique({ where: { operationId } }))) {
    throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
  }
}

/** Claims an operation for `who`. Taking over someone else's claim must be asked for. */
export async function claimOperation(operationId: string, who: string, opts: { takeOver?: boolean } = {}): Promise<{ holder: string; previous: string | null }> {
  return writeTransaction(async (tx) => {
    await lockChain(tx, [operationId]);
    await requireOperation(tx, operationId);
    const holder = (await currentAssignees(tx, [operationId])).get(operationId) ?? null;
    if (holder === who) return { holder: who, previous: holder };
    if (holder && !opts.takeOver) throw claimedByOther(operationId, holder, `this operation is claimed by ${holder}: take it over if they agreed`);
    const payload: AssignmentPayload = { action: "claim", assignee: who, previous: holder };
    await appendToChain(tx, [{ kind: "assignment", operation_id: operationId, actor: who, payload }], undefined, { locked: true });
    return { holder: who, previous: holder };
  });
}

/**
 * Releases the claim. Only its holder may, or an admin (`admin: true`, decided by the caller
 * from the permission table); anyone else gets claimed_by_other. Releasing an unclaimed
 * operation changes nothing.
 */
export async function releaseOperation(operationId: string, who: string, opts: { admin?: boolean } = {}): Promise<{ previous: string | null }> {
  return writeTransaction(async (tx) => {
    await lockChain(tx, [operationId]);
    await requireOperation(tx, operationId);
    const holder = (await currentAssignees(tx, [operationId])).get(operationId) ?? null;
    if (!holder) return { previous: null };
    if (holder !== who && !opts.admin) throw claimedByOther(operationId, holder, `this operation is claimed by ${holder}: only they or an admin may release it`);
    await appendToChain(tx, [releaseRecord(operationId, who, holder)], undefined, { locked: true });
    return { previous: holder };
  });
}
