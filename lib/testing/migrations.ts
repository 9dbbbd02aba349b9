import { readdirSync, readFileSync } from "node:fs";

/**
 * The SQL statements of the migration whose folder ends with `name`, for this provider; from
 * the comment line `from` on when given (a migration's backfill, without its schema changes).
 * Tests that replay an old backfill then replay the later ones an upgrade also runs.
 */
export function migrationStatements(provider: "sqlite" | "postgresql", name: string, from?: string): string[] {
  const dir = `prisma/migrations/${provider}`;
  const folder = readdirSync(dir).find((d) => d.endsWith(`_${name}`));
  if (!folder) throw new Error(`no migration ${name} in ${dir}`);
  const sql = readFileSync(`${dir}/${folder}/migration.sql`, "utf8");
  const start = from === undefined ? 0 : sql.indexOf(from);
  if (start < 0) throw new Error(`migration ${name} has no line ${from}`);
  return sql
    .slice(start)
    .split(/;\s*\n/)
    .map((s) => s.replace(/^--.*$/gm, "").trim())
    .filter(Boolean);
}

/** The one_clock migration's re-count of outcome_rollups and metric_rollups by the day of the call. */
export const oneClockRecount = (provider: "sqlite" | "postgresql") => migrationStatements(provider, "one_clock", "-- Both rollups re-counted");
