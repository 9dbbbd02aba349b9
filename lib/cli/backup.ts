import { parseArgs } from "node:util";
import { backupDatabase, restoreDatabase, type BackupSummary } from "@/lib/store/db/backup";
import { currentDatabaseUrl } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { verifyInstanceTrail } from "@/lib/store/chain/instance-checkpoints";
import { currentProjectId } from "@/lib/store/db/project-context";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";

/**
 * `backup --out FILE` and `restore --from FILE [--force]` (docs/DEPLOY.md, "Backups"): of the
 * database DATABASE_URL names, while the server runs. A restore verifies the chain it restored
 * and says what it holds; the server deploys any newer migration when it starts on it.
 */

export class BackupUsageError extends Error {}

const held = (s: Pick<BackupSummary, "records" | "head">) => `${s.records} records; ${s.head === null ? "no record yet" : `head at seq ${s.head}`}`;

export async function backupCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: "string" }, quiet: { type: "boolean" } } });
  if (!values.out) throw new BackupUsageError("--out is required");
  let shown = -1;
  const summary = await backupDatabase(currentDatabaseUrl(), values.out, (done, total) => {
    const pct = Math.floor((100 * done) / Math.max(1, total));
    if (!values.quiet && pct >= shown + 10) {
      shown = pct;
      process.stderr.write(`backing up: ${pct} % of ${total} pages\n`);
    }
  });
  console.log(`backup written: ${summary.file} (${summary.bytes} bytes), ${held(summary)}`);
  return 0;
}

export async function restoreCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { from: { type: "string" }, force: { type: "boolean" } } });
  if (!values.from) throw new BackupUsageError("--from is required");
  const summary = await restoreDatabase(values.from, currentDatabaseUrl(), { force: values.force ?? false });
  console.log(`restored ${values.from}: ${held(summary)}`);
  try {
    const { verdict } = await verifyStoredChain();
    if (!verdict.ok) {
      console.error(`the restored chain does not verify: seq ${verdict.badSeq}: ${verdict.problem}`);
      return 1;
    }
    console.log(`chain intact: ${verdict.count} records`);
    // The default project's database is also the instance's: its security trail came back with it.
    if (currentProjectId() === DEFAULT_PROJECT) {
      const trail = await verifyInstanceTrail();
      if (trail.problem) {
        console.error(`the restored instance's security trail does not verify: ${trail.problem}`);
        return 1;
      }
      console.log(`the instance's security trail intact: ${trail.verdict.count} records`);
    }
  } catch (e) {
    // A backup of an older release lacks tables this code reads: restored as it was, it is
    // upgraded by the server's next start (as an upgrade in place is), and verified after.
    const table = missingTable(e);
    if (!table) throw e;
    console.log(`the backup is of an older release (it has no ${table} table): npm start applies this release's migrations to it; run audit:verify after that`);
  }
  return 0;
}

/** The table a database error says is missing (SQLite's "no such table", PostgreSQL's 42P01), or null. */
function missingTable(e: unknown): string | null {
  for (let c: unknown = e; c; c = (c as { cause?: unknown }).cause) {
    const m = /no such table: (?:main\.)?(\w+)|relation "(?:[\w]+\.)?(\w+)" does not exist/.exec(c instanceof Error ? c.message : String(c));
    if (m) return m[1] ?? m[2];
  }
  return null;
}
