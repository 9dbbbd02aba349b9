import "server-only";
import { lockChain } from "../chain/chain";
import { writeTransaction } from "../db/db";
import { clearMetricProjection } from "./metrics-projection";
import { writeProjection } from "./projection";
import { clearSearchIndex } from "./search-index";
import { asSql } from "../db/sql";
import { correctionFacts, loadOperationRecords } from "../chain/stage-records";

const PAGE = 500;

/**
 * Recreates the derived projection (views, search keys and index, edges, rollups) from the immutable
 * records alone: clears it, then derives every operation again, page by page. Each page holds
 * the chain lock, so ingest running meanwhile never interleaves with a half-derived operation.
 */
export async function rebuildProjections(onProgress?: (done: number) => void): Promise<{ operations: number }> {
  await writeTransaction(async (tx) => {
    await lockChain(tx, "all");
    await tx.operationView.deleteMany({});
    await tx.operationKey.deleteMany({});
    await tx.operationEdge.deleteMany({});
    await tx.operationApproval.deleteMany({});
    await tx.outcomeRollup.deleteMany({});
    await clearMetricProjection(asSql(tx));
    await clearSearchIndex(tx);
  });
  let after = -1;
  let done = 0;
  for (;;) {
    const n = await writeTransaction(async (tx) => {
      await lockChain(tx, "all");
      const ops = await tx.operation.findMany({ where: { createdSeq: { gt: after } }, orderBy: { createdSeq: "asc" }, take: PAGE });
      if (!ops.length) return 0;
      const records = await loadOperationRecords(tx, ops.map((o) => o.operationId));
      await writeProjection(
        tx,
        ops.map((identity) => {
          const r = records.get(identity.operationId);
          return { identity, stages: r?.stages ?? [], corrections: correctionFacts(r?.corrections ?? []), approvals: r?.approvals };
        }),
      );
      after = ops[ops.length - 1].createdSeq;
      return ops.length;
    });
    if (!n) break;
    done += n;
    onProgress?.(done);
  }
  return { operations: done };
}
