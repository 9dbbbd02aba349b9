import "server-only";
import { currentProjectKey } from "@/lib/store/db/project-context";
import type { ChainRecord } from "@/lib/domain/hash";
import { walkSegments } from "@/lib/archive/segments";
import { openTarget } from "@/lib/archive/targets";
import type { ExportQuery } from "@/lib/store/chain/audit-export";
import { sealedStart } from "@/lib/store/chain/verify-chain";
import { reader } from "@/lib/store/db/db";

/**
 * What an export says about the records retention sealed (docs/AUDIT.md "Archived records"): a
 * line of kind "archive" (no seq) before the records. With the archive readable
 * (RECONCILE_ARCHIVE_URL), the sealed records come first, streamed back from it and verified on
 * the way; without it, or for a trajectory (the archive keeps no projection), the line names the
 * head the live records continue from, so the export still verifies from there.
 */
export type ArchiveNote = { kind: "archive"; note: string; from_archive: boolean; sealed_through: number; head_hash: string; sealed_at: string };

export async function archivedPart(q: ExportQuery): Promise<{ note: ArchiveNote; records: AsyncGenerator<ChainRecord> | null } | null> {
  const sealed = await sealedStart(await reader());
  if (!sealed) return null;
  const base = { kind: "archive" as const, sealed_through: sealed.seq, head_hash: sealed.hash, sealed_at: sealed.sealedAt };
  const url = process.env.RECONCILE_ARCHIVE_URL?.trim();
  if (!url || q.trajectory_id) {
    const why = q.trajectory_id ? "a trajectory's archived operations are not looked up in the archive" : "this server has no RECONCILE_ARCHIVE_URL to read them from";
    return { note: { ...base, from_archive: false, note: `records up to seq ${sealed.seq} were sealed into the archive (last on ${sealed.sealedAt}) and are not in this export: ${why}; the records here continue from their head` }, records: null };
  }
  const target = openTarget(url);
  async function* records(): AsyncGenerator<ChainRecord> {
    for await (const s of walkSegments(target, currentProjectKey(), 0, { linked: false })) {
      for (const r of s.records) {
        if (q.operation_id && r.operation_id !== q.operation_id) continue;
        if (q.since && Date.parse(r.recorded_at) < Date.parse(q.since)) continue;
        if (q.until && Date.parse(r.recorded_at) >= Date.parse(q.until)) continue;
        yield r;
      }
    }
  }
  return { note: { ...base, from_archive: true, note: `records up to seq ${sealed.seq} come from the archive (${target.url}), sealed on or before ${sealed.sealedAt}, each segment verified by its signed checkpoint` }, records: records() };
}
