import type { ReactNode } from "react";
import type { SealedSegment } from "@/lib/store/archive/seal";

export type ArchiveStatusProps = {
  /** How long this project keeps records and whose setting that is (null: everything), the archive's URL, or why the server's settings mean nothing. */
  retention: { days: number; from: "project" | "instance" } | null;
  /** The form that changes it, for the project's admins (retention-form.tsx). */
  editor?: ReactNode;
  archiveUrl: string | null;
  problem: string | null;
  /** Every sealed segment, oldest first. */
  segments: SealedSegment[];
};

/** The most segments listed (the newest); the rest are counted. */
const SHOWN = 30;

const when = (iso: string) => `${iso.replace("T", " ").slice(0, 19)} UTC`;

/**
 * The audit page's "Retention and archive" panel: whether retention is on, and what was sealed
 * into the archive and when (segments, through which seq, where). docs/DEPLOY.md "Retention and archive".
 */
export function ArchiveStatus({ retention, editor, archiveUrl, problem, segments }: ArchiveStatusProps) {
  const last = segments[segments.length - 1];
  const records = segments.reduce((sum, s) => sum + s.records, 0);
  const shown = segments.slice(-SHOWN).reverse();
  return (
    <section aria-labelledby="archive" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800" data-testid="archive-status">
      <h2 id="archive" className="font-semibold">Retention and archive</h2>
      {problem ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          The retention settings mean nothing: {problem}
        </p>
      ) : retention === null ? (
        <p className="text-sm text-slate-700 dark:text-slate-300">
          Retention is off: every record of this project stays in the database for good.{" "}
          {archiveUrl ? (
            <>A project admin can set a number of days below; whole days older than that are then sealed into the archive and deleted here.</>
          ) : (
            <>
              To seal whole days older than a number of days into an archive (a directory or an S3 bucket) and delete them here, the server needs{" "}
              <code className="font-mono">RECONCILE_ARCHIVE_URL</code>, and then this project a number of days (or the server{" "}
              <code className="font-mono">RECONCILE_RETENTION_DAYS</code>; docs/DEPLOY.md, &ldquo;Retention and archive&rdquo;).
            </>
          )}
        </p>
      ) : (
        <p className="text-sm text-slate-700 dark:text-slate-300">
          Retention is on for this project ({retention.from === "project" ? "its own setting" : "the server's default, RECONCILE_RETENTION_DAYS"}): each day,
          records older than {retention.days.toLocaleString("en")} whole day{retention.days === 1 ? "" : "s"} are sealed into{" "}
          <code className="break-all font-mono">{archiveUrl}</code>, read back and verified, then deleted here. Operations that need review, are claimed
          or await approval stay, and so does everything after them.
        </p>
      )}
      {problem ? null : editor}
      {last ? (
        <>
          <p className="text-sm">
            Sealed through <strong className="tabular-nums">seq {last.last_seq.toLocaleString()}</strong>: {records.toLocaleString()} records in{" "}
            {segments.length.toLocaleString()} segment{segments.length === 1 ? "" : "s"}, the last on {when(last.sealed_at)}. The live chain continues
            from hash <span className="font-mono text-xs">{last.head_hash.slice(0, 16)}…</span>; verify both with{" "}
            <code className="font-mono">npm run cli -- audit:verify --archive DIR_OR_URL</code>.
          </p>
          <div className="overflow-x-auto">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">Sealed segments, newest first</caption>
              <thead className="text-slate-600 dark:text-slate-400">
                <tr>
                  <th scope="col" className="py-1 pr-4 font-medium">seqs</th>
                  <th scope="col" className="py-1 pr-4 font-medium">records</th>
                  <th scope="col" className="py-1 pr-4 font-medium">sealed</th>
                  <th scope="col" className="py-1 font-medium">where</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((s) => (
                  <tr key={`${s.chain}-${s.last_seq}`} className="border-t border-slate-100 dark:border-slate-800">
                    <td className="py-1 pr-4 tabular-nums">
                      {s.first_seq.toLocaleString()}–{s.last_seq.toLocaleString()}
                    </td>
                    <td className="py-1 pr-4 tabular-nums">{s.records.toLocaleString()}</td>
                    <td className="py-1 pr-4">{when(s.sealed_at)}</td>
                    <td className="break-all py-1 font-mono text-xs">{s.location}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {segments.length > SHOWN ? <p className="text-sm text-slate-600 dark:text-slate-400">and {(segments.length - SHOWN).toLocaleString()} older segments</p> : null}
        </>
      ) : (
        <p className="text-sm text-slate-600 dark:text-slate-400">Nothing has been archived yet.</p>
      )}
    </section>
  );
}
