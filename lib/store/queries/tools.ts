import "server-only";
import { reader } from "../db/db";
import { asSql, placeholder } from "../db/sql";

/** Names asked about in one statement (SQLite allows 500 terms in a compound SELECT). */
const NAMES_PER_STATEMENT = 200;

/**
 * Of these tool names, the ones no operation has used (each once, in the order given): what a
 * setting naming a tool warns about. One statement per 200 names, each name one index seek on
 * operation_views (tool, created_seq), however many operations a tool has.
 */
export async function unusedTools(names: readonly string[]): Promise<string[]> {
  const asked = [...new Set(names)];
  if (!asked.length) return [];
  const q = asSql(await reader());
  const unused = new Set<string>();
  for (let i = 0; i < asked.length; i += NAMES_PER_STATEMENT) {
    const chunk = asked.slice(i, i + NAMES_PER_STATEMENT);
    const list = chunk.map((_, k) => `SELECT CAST(${placeholder(k + 1)} AS TEXT) AS name`).join(" UNION ALL ");
    const rows = await q.all<{ name: string }>(
      `SELECT asked.name AS name FROM (${list}) asked WHERE NOT EXISTS (SELECT 1 FROM operation_views o WHERE o.tool = asked.name)`,
      chunk,
    );
    for (const r of rows) unused.add(r.name);
  }
  return asked.filter((n) => unused.has(n));
}

/**
 * Whether any recorded intent of this tool names a fingerprint (issue 54: a verifier of such a
 * tool must take the fingerprint from its answer). One index seek on operation_views (tool,
 * created_seq), reading that tool's rows until the first with a fingerprint.
 */
export async function toolIntentsCarryFingerprints(tool: string): Promise<boolean> {
  const q = asSql(await reader());
  const rows = await q.all<{ one: number }>(`SELECT 1 AS one FROM operation_views WHERE tool = ${placeholder(1)} AND fingerprint IS NOT NULL LIMIT 1`, [tool]);
  return rows.length > 0;
}
