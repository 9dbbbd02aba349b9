import { parseRetentionDays } from "@/lib/domain/retention";

/**
 * Retention's instance settings: RECONCILE_RETENTION_DAYS (unset: keep everything; a project's
 * own `retention_days` overrides it, lib/retention/jobs.ts) and RECONCILE_ARCHIVE_URL
 * (file:///DIR or s3://BUCKET/PREFIX), which retention needs; each project's segments go under its
 * slug. Throws with the reason when they do not fit together.
 */
export type RetentionSettings = { days: number; archiveUrl: string } | { days: null; archiveUrl: string | null };

export function retentionSettings(env: NodeJS.ProcessEnv = process.env): RetentionSettings {
  const days = parseRetentionDays(env.RECONCILE_RETENTION_DAYS);
  const archiveUrl = env.RECONCILE_ARCHIVE_URL?.trim() || null;
  if (days === null) return { days, archiveUrl };
  if (!archiveUrl) throw new Error("RECONCILE_RETENTION_DAYS is set but RECONCILE_ARCHIVE_URL is not: retention seals records into the archive before it deletes them");
  return { days, archiveUrl };
}
