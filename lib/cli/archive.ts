import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Checkpoint } from "@/lib/domain/checkpoint";
import { currentProjectKey } from "@/lib/store/db/project-context";
import { GENESIS_HASH } from "@/lib/domain/hash";
import { walkSegments } from "@/lib/archive/segments";
import { openTarget } from "@/lib/archive/targets";
import { sealNow } from "@/lib/retention/jobs";
import { sealedClaimOf, type SealedClaim } from "@/lib/domain/sealed-rows";

/** `archive:seal`: seals what retention lets go now, as the daily job does. */
export async function archiveSealCommand(actor: string): Promise<number> {
  const report = await sealNow(actor);
  if (!report) {
    console.log("retention is off (RECONCILE_RETENTION_DAYS is unset): nothing is sealed or deleted");
    return 0;
  }
  for (const s of report.sealed) console.log(`sealed seq ${s.first_seq}-${s.last_seq} (${s.records} records) into ${s.location}`);
  console.log(`${report.records} records sealed into ${report.sealed.length} segment(s); cut-off ${report.cutoff}`);
  if (report.stoppedAt) console.log(`stopped at seq ${report.stoppedAt.seq}: ${report.stoppedAt.why}`);
  return 0;
}

/** An archive given as a URL, or as a plain directory path. */
export function archiveUrlOf(given: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : pathToFileURL(path.resolve(given)).toString();
}

/**
 * `audit:verify --archive`: walks the segments from the genesis hash, each signed and linked to
 * the one before, checks the stored checkpoints that fall within them, and says where the archive
 * ends. True when it is intact and ends where the live chain starts.
 */
export async function verifyArchive(
  given: string,
  live: { sealed: { seq: number; hash: string } | null; checkpoints: Checkpoint[]; pinnedKey?: string },
  /** Filled with the archive.sealed records the segments hold (lib/domain/sealed-rows.ts). */
  claims: SealedClaim[] = [],
): Promise<boolean> {
  const target = openTarget(archiveUrlOf(given));
  const watch = new Map(live.checkpoints.filter((c) => !c.heads && live.sealed && c.size <= live.sealed.seq).map((c) => [c.size, c]));
  let segments = 0;
  let records = 0;
  let head = GENESIS_HASH;
  let last = 0;
  let ok = true;
  try {
    for await (const s of walkSegments(target, currentProjectKey(), 0, { linked: false, pinnedKey: live.pinnedKey })) {
      segments++;
      records += s.records.length;
      for (const r of s.records) {
        const claim = r.kind === "security" ? sealedClaimOf(r.seq, r.payload) : null;
        if (claim) claims.push(claim);
        const c = watch.get(r.seq);
        if (c && c.head !== r.hash) {
          ok = false;
          console.error(`archive: seq ${r.seq} does not match the checkpoint signed at ${c.time}`);
        } else if (c) console.log(`checkpoint (size ${c.size}, signed ${c.time}): matches the archive`);
      }
      head = s.checkpoint.head_hash_at_last_seq;
      last = s.checkpoint.last_seq;
    }
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    return false;
  }
  console.log(`archive ${target.url}: ${segments} segment(s), ${records} records, seq 1-${last}, each signed and linked; its head ${head}`);
  if (!live.sealed) {
    if (segments) console.error("the database has sealed nothing, but the archive holds segments: is it this instance's archive?");
    return ok && segments === 0;
  }
  if (live.sealed.seq !== last || live.sealed.hash !== head) {
    console.error(`the archive ends at seq ${last}, but the live chain continues from seq ${live.sealed.seq} (hash ${live.sealed.hash}): they do not meet`);
    return false;
  }
  console.log(`the archive and the live chain meet at seq ${last} (hash ${head}): verified end to end`);
  return ok;
}
