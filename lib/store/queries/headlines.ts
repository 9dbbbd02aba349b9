import "server-only";
import { headline } from "@/lib/domain/headline";
import { reader } from "../db/db";
import { selectIn } from "../db/sql";

/**
 * An intent stage read for its params only up to this size: a larger one (a hostile or huge
 * payload) leads its row with the tool and target alone, and costs the page nothing more.
 */
const PARAMS_READ_MAX = 32_768;

/**
 * What each operation of a page leads with (lib/domain/headline.ts): its tool, target and key
 * argument, from its intent's params (null: no tool, the row leads with its id). One statement
 * per page, on the (op_seq, seq) index, by the items' cursors (their created_seq).
 */
export async function headlinesOf(items: { operation_id: string; cursor: string; tool: string | null; target: string | null }[]): Promise<Map<string, string | null>> {
  const withTool = items.filter((i) => i.tool);
  const params = new Map<string, unknown>();
  if (withTool.length) {
    const rows = await selectIn<{ operation_id: string; payload: string | null }>(
      await reader(),
      `SELECT operation_id, CASE WHEN length(payload) <= ${PARAMS_READ_MAX} THEN payload END AS payload FROM chain_records WHERE op_seq IN %IN% AND stage = 'intent' ORDER BY seq`,
      withTool.map((i) => Number(i.cursor)),
    );
    for (const r of rows) {
      if (params.has(r.operation_id) || r.payload === null) continue;
      try {
        const data = (JSON.parse(r.payload) as { data?: { params?: unknown } }).data;
        params.set(r.operation_id, data?.params);
      } catch {
        // A stored record is JSON; one that is not leads with the tool and target alone.
      }
    }
  }
  return new Map(items.map((i) => [i.operation_id, headline({ tool: i.tool, target: i.target, params: params.get(i.operation_id) })]));
}

/** One operation's headline (null: no such operation, or no tool): the page's title. */
export async function headlineOf(operationId: string): Promise<string | null> {
  const v = await (await reader()).operationView.findUnique({ where: { operationId }, select: { createdSeq: true, tool: true, target: true } });
  if (!v) return null;
  return (await headlinesOf([{ operation_id: operationId, cursor: String(v.createdSeq), tool: v.tool, target: v.target }])).get(operationId) ?? null;
}
