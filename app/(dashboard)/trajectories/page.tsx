import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { listTrajectories } from "@/lib/store/queries/get-trajectory";
import { TableScroll } from "@/components/ui/table-scroll";
import { CopyButton } from "@/components/ui/copy-button";
import { shortId } from "@/lib/domain/headline";

export const metadata: Metadata = { title: "Trajectories" };

export default async function TrajectoriesPage() {
  const me = await requirePage("operations:read", "/trajectories");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const rows = await listTrajectories();
    return (
      <div className="space-y-6">
        <div>
          <h1 className="text-2xl font-semibold">Trajectories</h1>
          <p className="mt-1 text-slate-700 dark:text-slate-300">Runs of an agent: operations sharing a trajectory id, most recently active first.</p>
        </div>
        {rows.length === 0 ? (
          <p className="text-slate-700 dark:text-slate-300">No trajectories yet: send trajectory_id with each record to group an agent&apos;s steps.</p>
        ) : (
          <TableScroll>
            <table className="w-full text-left text-sm">
              <thead>
                <tr className="text-slate-600 dark:text-slate-400">
                  <th className="py-2 pr-3 font-medium">Trajectory</th>
                  <th className="py-2 pr-3 font-medium">Steps</th>
                  <th className="py-2 pr-3 font-medium">Need review</th>
                  <th className="py-2 pr-3 font-medium">
                    <abbr title="Steps that rest, directly or through others, on a step that is not verified" className="no-underline">
                      Tainted
                    </abbr>
                  </th>
                  <th className="py-2 font-medium">Last step recorded</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((t) => (
                  <tr key={t.trajectory_id} className="border-t border-slate-200 dark:border-slate-800">
                    <td className="py-2 pr-3">
                      <span className="inline-flex items-center gap-1">
                        <Link href={`/trajectories/${encodeURIComponent(t.trajectory_id)}`} title={t.trajectory_id} className="break-all font-mono text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
                          {shortId(t.trajectory_id)}
                        </Link>
                        {shortId(t.trajectory_id) === t.trajectory_id ? null : <CopyButton value={t.trajectory_id} what="trajectory id" />}
                      </span>
                    </td>
                    <td className="py-2 pr-3 tabular-nums">{t.steps}</td>
                    <td className={`py-2 pr-3 tabular-nums ${t.needs_review ? "font-semibold text-rose-800 dark:text-rose-300" : ""}`}>{t.needs_review}</td>
                    <td className={`py-2 pr-3 tabular-nums ${t.tainted ? "font-semibold text-amber-800 dark:text-amber-300" : ""}`}>
                      {t.tainted === null ? <span title="Not counted here: over 1,000 steps">—</span> : t.tainted}
                    </td>
                    <td className="py-2 tabular-nums">{t.last_at ? `${t.last_at.slice(0, 16).replace("T", " ")} UTC` : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </div>
    );
  });
}
