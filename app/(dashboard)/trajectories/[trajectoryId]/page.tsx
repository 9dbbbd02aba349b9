import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { notFound } from "next/navigation";
import { categoryName, OutcomeBadge } from "@/components/operations/badges";
import { can } from "@/lib/domain/permissions";
import { ProjectAnchor } from "@/components/shell/project-anchor";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { getTrajectory } from "@/lib/store/queries/get-trajectory";
import { correctionActsOf } from "@/lib/store/queries/list-operations";
import { StatusText } from "@/components/operations/status";
import { OperationLead } from "@/components/operations/lead";
import { CopyButton } from "@/components/ui/copy-button";
import { headline, shortId } from "@/lib/domain/headline";

type Params = { params: Promise<{ trajectoryId: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: `Trajectory ${shortId(decodeURIComponent((await params).trajectoryId))}` };
}

export default async function TrajectoryPage({ params }: Params) {
  const id = decodeURIComponent((await params).trajectoryId);
  const me = await requirePage("operations:read", `/trajectories/${encodeURIComponent(id)}`);
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const t = await getTrajectory(id);
    if (!t) notFound();
    const acts = await correctionActsOf(t.steps);
    const tainted = new Set(t.tainted);
    const inTrajectory = new Set(t.steps.map((s) => s.operation_id));
    const exportHref = `/api/v1/audit/export?${new URLSearchParams({ trajectory_id: t.trajectory_id, format: "ndjson" })}`;
    return (
      <div className="space-y-6">
        <nav aria-label="Breadcrumb" className="text-sm">
          <Link href="/trajectories" className="text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
            Trajectories
          </Link>
        </nav>
        <header>
          <div className="flex flex-wrap items-center gap-2">
            <h1 className="break-all font-mono text-xl font-semibold sm:text-2xl" title={t.trajectory_id}>
              {shortId(t.trajectory_id)}
            </h1>
            <CopyButton value={t.trajectory_id} what="trajectory id" />
          </div>
          <p className="mt-1 text-slate-700 dark:text-slate-300">
            {t.steps.length} step{t.steps.length === 1 ? "" : "s"} in the order they were recorded.
            {t.first_unverified_premise
              ? ` It went wrong at ${t.first_unverified_premise}: later steps relied on it while it was not verified.`
              : " No step relied on an unverified one."}
            {t.tainted.length ? ` ${t.tainted.length} step${t.tainted.length === 1 ? " rests" : "s rest"} on an unverified premise.` : ""}
          </p>
          {can(me, "audit:export") ? (
            <p className="mt-2 text-sm">
              <ProjectAnchor href={exportHref} download className="text-indigo-700 underline underline-offset-2 dark:text-indigo-300">
                Export this trajectory&apos;s audit records (NDJSON)
              </ProjectAnchor>
              <span className="text-slate-600 dark:text-slate-400"> · verifiable with </span>
              <code className="font-mono text-xs">npm run cli -- audit:verify --file … --subset</code>
            </p>
          ) : null}
        </header>
        <ol className="space-y-3" aria-label="Steps">
          {t.steps.map((s, i) => {
            const first = s.operation_id === t.first_unverified_premise;
            const isTainted = tainted.has(s.operation_id);
            return (
              <li
                key={s.operation_id}
                id={`step-${encodeURIComponent(s.operation_id)}`}
                aria-current={first ? "step" : undefined}
                className={`rounded-xl border p-4 ${first ? "border-rose-400 bg-rose-50 dark:border-rose-700 dark:bg-rose-950" : isTainted ? "border-amber-300 bg-amber-50 dark:border-amber-800 dark:bg-amber-950/40" : "border-slate-200 dark:border-slate-800"}`}
              >
                <div className="flex flex-wrap items-center gap-3">
                  <span className="text-sm tabular-nums text-slate-600 dark:text-slate-400">{i + 1}</span>
                  <OutcomeBadge outcome={s.effective_outcome} />
                  <OperationLead id={s.operation_id} headline={headline({ tool: s.tool, target: s.target })} />
                </div>
                {s.target || s.effect ? (
                  <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm">
                    {s.target ? (
                      <>
                        <dt className="text-slate-600 dark:text-slate-400">Target</dt>
                        <dd className="break-all">{s.target}</dd>
                      </>
                    ) : null}
                    {s.effect ? (
                      <>
                        <dt className="text-slate-600 dark:text-slate-400">Intended effect</dt>
                        <dd className="break-words">{s.effect}</dd>
                      </>
                    ) : null}
                  </dl>
                ) : null}
                <p className="mt-1 text-sm"><StatusText op={s} act={acts.get(s.operation_id)} />{categoryName(s.failure_category) ? ` · category ${categoryName(s.failure_category)}` : ""}</p>
                {first ? <p className="mt-1 text-sm font-semibold text-rose-900 dark:text-rose-200">The first unverified step that later steps relied on.</p> : null}
                {isTainted ? (
                  <p className="mt-1 text-sm text-amber-950 dark:text-amber-100">
                    Built on an unverified premise: relies on {t.tainted_by[s.operation_id].join(", ")}.
                  </p>
                ) : null}
                {s.depends_on.length ? (
                  <p className="mt-1 text-xs text-slate-600 dark:text-slate-400">
                    depends on{" "}
                    {s.depends_on.map((d, j) => (
                      <span key={d}>
                        {j ? ", " : ""}
                        <Link
                          href={inTrajectory.has(d) ? `#step-${encodeURIComponent(d)}` : `/operations/${encodeURIComponent(d)}`}
                          className="font-mono text-indigo-700 underline underline-offset-2 dark:text-indigo-300"
                        >
                          {d}
                        </Link>
                      </span>
                    ))}
                  </p>
                ) : null}
              </li>
            );
          })}
        </ol>
      </div>
    );
  });
}
