import type { Metadata } from "next";
import { FACTS_GRID } from "@/components/audit/facts";
import { AuditExportForm } from "@/components/audit/export-form";
import { VerifyButton } from "@/components/audit/verify-button";
import { ServerHealth } from "@/components/audit/server-health";
import { ArchiveStatus, type ArchiveStatusProps } from "@/components/audit/archive-status";
import { RetentionForm } from "@/components/audit/retention-form";
import { retentionSettings } from "@/lib/retention/config";
import { effectiveRetention } from "@/lib/domain/retention";
import { can } from "@/lib/domain/permissions";
import { projectById } from "@/lib/store/people/projects";
import { sealedSegments } from "@/lib/store/archive/seal";
import { serverHealth } from "@/lib/observability/health";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { formatCheckpoint, keyFingerprint, publicKeyPem } from "@/lib/domain/checkpoint";
import { chainHead } from "@/lib/store/chain/audit-export";
import { checkpointEvery, checkpointPublicKey, latestCheckpoint, maybeCheckpoint } from "@/lib/store/chain/checkpoints";

export const metadata: Metadata = { title: "Audit" };

export default async function AuditPage() {
  const me = await requirePage("audit:export", "/audit");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    // Looking at the trail is a good moment to sign one if it is due (it also starts the hourly timer).
    await maybeCheckpoint(true);
    const [head, checkpoint, health, archive] = await Promise.all([chainHead(), latestCheckpoint(), serverHealth(), archiveStatus(me.project.id, can(me, "project:settings"))]);
    const key = checkpointPublicKey();
    const fingerprint = keyFingerprint(key);
    const every = checkpointEvery();
    const cadence = `one is signed every ${every.records.toLocaleString("en")} records and at least every ${duration(every.ms)} while records arrive`;
    return (
      <div className="space-y-8">
        <div>
          <h1 className="text-2xl font-semibold">Audit trail</h1>
          <p className="mt-1 text-slate-700 dark:text-slate-300">
            Every stage record, correction, assignment and security event of this project (its refusals, exports and settings), in{" "}
            {head && head.chains > 1 ? `${head.chains} hash chains (all of an operation's records in one)` : "one hash chain"}: each record&apos;s hash
            covers its content and the hash before it, so an edit anywhere breaks every link after it. Exports are themselves recorded.
            Sign-ins and changes to users, tokens, projects and members are in the server&apos;s own trail, which instance admins read on the
            Security log page.
          </p>
        </div>
        <section aria-labelledby="status" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="status" className="font-semibold">Chain status</h2>
          <dl className={FACTS_GRID}>
            <dt className="text-slate-600 dark:text-slate-400">records</dt>
            <dd className="tabular-nums">
              {head
                ? head.chains > 1
                  ? `${head.records.toLocaleString()} in ${head.chains} chains (Merkle root of their heads ${head.hash.slice(0, 16)}…)`
                  : `${head.records.toLocaleString()} (head ${head.hash.slice(0, 16)}…)`
                : "none yet"}
            </dd>
            <dt className="text-slate-600 dark:text-slate-400">last checkpoint</dt>
            <dd>{checkpoint ? `${checkpoint.time.replace("T", " ").slice(0, 19)} UTC, covering ${checkpoint.size.toLocaleString()} records (${cadence})` : `none yet (${cadence})`}</dd>
            <dt className="text-slate-600 dark:text-slate-400">signing key fingerprint</dt>
            <dd className="break-all font-mono text-xs" data-testid="key-fingerprint">{fingerprint}</dd>
            <dt className="text-slate-600 dark:text-slate-400">public key</dt>
            <dd className="break-all font-mono text-xs">{key}</dd>
          </dl>
          <details className="text-sm">
            <summary className="cursor-pointer text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">the public key as PEM, to pin it</summary>
            <p className="mt-2 text-slate-700 dark:text-slate-300">
              A checkpoint proves something only against a key you trust: keep this somewhere the database&apos;s admin cannot change, and verify
              with <code className="font-mono">npm run cli -- audit:verify --key PUBLIC.pem</code> (or{" "}
              <code className="font-mono">RECONCILE_CHECKPOINT_PUBLIC_KEY</code>). A checkpoint signed by any other key then fails, naming its
              fingerprint.
            </p>
            <pre className="mt-2 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-900">{publicKeyPem(key)}</pre>
          </details>
          <VerifyButton />
          {checkpoint ? (
            <details className="text-sm">
              <summary className="cursor-pointer text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">the latest checkpoint, to keep somewhere else</summary>
              <pre className="mt-2 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-900">{formatCheckpoint(checkpoint)}</pre>
            </details>
          ) : null}
        </section>
        <ServerHealth {...health} />
        <ArchiveStatus {...archive} />
        <section aria-labelledby="export" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="export" className="font-semibold">Export</h2>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Verify an NDJSON export with <code className="font-mono">npm run cli -- audit:verify --file EXPORT.ndjson</code> (add{" "}
            <code className="font-mono">--subset</code> for a filtered one, and <code className="font-mono">--checkpoint FILE</code> with a checkpoint
            kept elsewhere, and <code className="font-mono">--key PUBLIC.pem</code> to pin the signing key).
          </p>
          <AuditExportForm total={head?.records ?? 0} />
        </section>
      </div>
    );
  });
}

/** The project's retention (its own days, else the server's) and what it sealed. */
async function archiveStatus(projectId: string, canEdit: boolean): Promise<ArchiveStatusProps> {
  const [segments, project] = await Promise.all([sealedSegments(), projectById(projectId)]);
  const own = project?.retentionDays ?? null;
  try {
    const { days, archiveUrl } = retentionSettings();
    return { retention: effectiveRetention(own, days), editor: canEdit && archiveUrl ? <RetentionForm own={own} serverDays={days} /> : undefined, archiveUrl, problem: null, segments };
  } catch (e) {
    return { retention: null, archiveUrl: null, problem: e instanceof Error ? e.message : String(e), segments };
  }
}

function duration(ms: number): string {
  const [n, unit] = ms % 3_600_000 === 0 ? [ms / 3_600_000, "hour"] : ms % 60_000 === 0 ? [ms / 60_000, "minute"] : [ms / 1000, "second"];
  return n === 1 ? unit : `${n.toLocaleString("en")} ${unit}s`;
}
