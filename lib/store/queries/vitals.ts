import "server-only";
import { asSql, placeholder } from "../db/sql";
import { reader } from "../db/db";
import { provider } from "../db/database";
import { perProject } from "../db/project-context";
import { chainCountIn, committedHeads, singleChainHead } from "../chain/chain";

/**
 * What the people on call read about the server from its database (GET /metrics, the health
 * panel on the audit page, /api/health/ready): each chain's head, the last checkpoint, the jobs
 * that are due and how late the oldest is, the database's size: the current project's. Every read is a few rows off an
 * index (chain_records' key, chain_lock, checkpoints(size), job(status, due_at)) or a catalogue
 * figure, so a scrape costs the same at a thousand operations or a million (bench:metrics).
 */
export type Vitals = {
  chains: { chain: number; seq: number }[];
  checkpoint: { size: number; time: string } | null;
  /** Pending jobs whose time has come, by kind, with the oldest one's due time (epoch ms). */
  jobsDue: { kind: string; due: number; oldestDueAt: number }[];
  databaseBytes: number | null;
};

export async function readVitals(now = Date.now()): Promise<Vitals> {
  const db = asSql(await reader());
  // Independent reads, sent together: on PostgreSQL each is a round trip of its own (bench:metrics).
  const [heads, [checkpoint], due, bytes] = await Promise.all([
    chainCountIn(db, { readOnly: true }).then(async (n) => (n === 1 ? [await singleChainHead(db)] : committedHeads(db, n))),
    db.all<{ size: number | bigint; time: string }>("SELECT size, time FROM checkpoints ORDER BY size DESC LIMIT 1"),
    db.all<{ kind: string; n: number | bigint | string; oldest: number | bigint | string }>(
      `SELECT kind, COUNT(*) AS n, MIN(due_at) AS oldest FROM job WHERE status = 'pending' AND due_at <= ${placeholder(1)} GROUP BY kind`,
      [now],
    ),
    databaseBytes(),
  ]);
  return {
    chains: heads.map((h, chain) => ({ chain, seq: h.seq })),
    checkpoint: checkpoint ? { size: Number(checkpoint.size), time: checkpoint.time } : null,
    jobsDue: due.map((r) => ({ kind: r.kind, due: Number(r.n), oldestDueAt: Number(r.oldest) })),
    databaseBytes: bytes,
  };
}

/**
 * A database's size changes slowly and costs the most to read (on PostgreSQL, a file size per
 * table and index of the schema): read at most every SIZE_MS per project, not at every scrape.
 */
const SIZE_MS = 30_000;
const sizes = perProject("vitals-database-bytes", () => ({ at: 0, bytes: null as number | null }));

async function databaseBytes(): Promise<number | null> {
  const kept = sizes();
  if (kept.at && Date.now() - kept.at < SIZE_MS) return kept.bytes;
  const bytes = await readDatabaseBytes();
  Object.assign(kept, { at: Date.now(), bytes });
  return bytes;
}

async function readDatabaseBytes(): Promise<number | null> {
  const db = asSql(await reader());
  try {
    if (provider() === "postgresql") {
      // A project is a schema of the database (lib/domain/projects.ts): its tables, their
      // indexes and TOAST, off the catalogue.
      const [row] = await db.all<{ bytes: number | bigint | string }>(
        "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm', 'p')",
      );
      return Number(row.bytes);
    }
    const [count] = await db.all<{ page_count: number | bigint }>("PRAGMA page_count");
    const [size] = await db.all<{ page_size: number | bigint }>("PRAGMA page_size");
    return Number(count.page_count) * Number(size.page_size);
  } catch {
    return null;
  }
}

/** Names of the migrations the database records as applied (finished, not rolled back). */
export async function appliedMigrations(): Promise<string[]> {
  const db = asSql(await reader());
  const rows = await db.all<{ migration_name: string }>("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL");
  return rows.map((r) => r.migration_name);
}
