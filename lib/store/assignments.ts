import "server-only";
import { ApiError } from "@/lib/api/errors";
import { appendToChain, lockChain } from "./chain";
import { reader, writeTransaction, type Db, type Tx } from "./db";
import { selectIn } from "./sql";

/**
 * Who is working on which operation in the review queue. Claiming, releasing and taking over
 * are records in the chain (kind "assignment"), like everything else a person does; the
 * current holder is the latest of them.
 */
type AssignmentPayload = { action: "claim" | "release"; assignee: string | null; previous: string | null };

export async function currentAssignees(db: Db | Tx, operationIds: string[]): Promise<Map<string, string>> {
  const rows = await selectIn<{ operation_id: string; kind: string; payload: string }>(
    db,
    // Filtered by kind in code so that SQLite uses the (operation_id, seq) index (see stage-records.ts).
    "SELECT operation_id, kind, payload FROM chain_records WHERE operation_id IN %IN% ORDER BY seq",
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

export async function assigneesOf(operationIds: string[]): Promise<Map<string, string>> {
  return currentAssignees(await reader(), operationIds);
}

/** Claims an operation for `who`. Taking over someone else's claim must be asked for. */
export async function claimOperation(operationId: string, who: string, opts: { takeOver?: boolean } = {}): Promise<{ previous: string | null }> {
  return writeTransaction(async (tx) => {
    await lockChain(tx);
    if (!(await tx.operation.findUnique({ where: { operationId } }))) throw new ApiError("not_found", "no such operation");
    const holder = (await currentAssignees(tx, [operationId])).get(operationId) ?? null;
    if (holder === who) return { previous: holder };
    if (holder && !opts.takeOver) throw new ApiError("conflict", `${holder} is already working on this operation; take it over if they agreed`);
    const payload: AssignmentPayload = { action: "claim", assignee: who, previous: holder };
    await appendToChain(tx, [{ kind: "assignment", operation_id: operationId, actor: who, payload }], undefined, { locked: true });
    return { previous: holder };
  });
}

export async function releaseOperation(operationId: string, who: string): Promise<void> {
  await writeTransaction(async (tx) => {
    await lockChain(tx);
    const holder = (await currentAssignees(tx, [operationId])).get(operationId) ?? null;
    if (!holder) return;
    const payload: AssignmentPayload = { action: "release", assignee: null, previous: holder };
    await appendToChain(tx, [{ kind: "assignment", operation_id: operationId, actor: who, payload }], undefined, { locked: true });
  });
}
