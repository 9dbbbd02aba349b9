import type { Metadata } from "next";
import { isHeld } from "@/lib/domain/approval";
import Link from "@/components/shell/link";
import { notFound } from "next/navigation";
import { OutcomeBadge } from "@/components/operations/badges";
import { StatusText } from "@/components/operations/status";
import { reviewOf } from "@/lib/domain/metrics";
import { actInEffect } from "@/lib/domain/status";
import { Links, Timeline } from "@/components/operations/timeline";
import { VerdictHistory } from "@/components/operations/verdict-history";
import { Attempts } from "@/components/operations/attempts";
import { ApprovalPanel } from "@/components/review/approval-panel";
import { CorrectionPanel } from "@/components/review/correction-panel";
import { renderedAt } from "@/components/ui/when";
import { auditSampleOf } from "@/lib/store/settings/audit-sampling";
import { CorrectionsHistory } from "@/components/review/corrections-history";
import { OperationKeys } from "@/components/review/operation-keys";
import { can, roleAtLeast } from "@/lib/domain/permissions";
import type { Idempotency } from "@/lib/domain/outcomes";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { claimHolder } from "@/lib/store/review/assignments";
import { getOperation } from "@/lib/store/queries/get-operation";
import { queueNeighbours } from "@/lib/store/queries/list-operations";
import { headline, shortId } from "@/lib/domain/headline";
import { headlineOf } from "@/lib/store/queries/headlines";
import { currentPrincipal } from "@/lib/auth/session";
import { CopyButton } from "@/components/ui/copy-button";

type Params = { params: Promise<{ operationId: string }> };

/** The tab's title leads with what happened too (the id short after it); without a tool, the id. */
export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const id = decodeURIComponent((await params).operationId);
  const me = await currentPrincipal();
  const lead = me ? await inProject(me.project, () => headlineOf(id)) : null;
  return { title: lead ? `${lead} (${shortId(id)})` : id };
}

export default async function OperationPage({ params }: Params) {
  const id = decodeURIComponent((await params).operationId);
  const me = await requirePage("operations:read", `/operations/${encodeURIComponent(id)}`);
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const op = await getOperation(id);
    if (!op) notFound();
    const reviewer = can(me, "operations:correct");
    const holder = reviewer ? ((await claimHolder(id)) ?? null) : null;
    const queue = await queueNeighbours(id);
    const sample = await auditSampleOf(id);
    const review = reviewOf({ outcome: op.effective_outcome, claim_withdrawn: op.claim_withdrawn, resolved_from: op.resolved_from });
    const act = actInEffect(review, op.corrections);
    const intent = op.stages.find((st) => st.stage === "intent")?.payload as { target?: unknown; params?: unknown } | undefined;
    const toolName = typeof op.tool === "string" ? op.tool : ((op.tool as { name?: string } | null)?.name ?? null);
    const lead = headline({ tool: toolName, target: typeof intent?.target === "string" ? intent.target : null, params: intent?.params });
    const agent = typeof op.agent === "string" ? op.agent : ((op.agent as { name?: string } | null)?.name ?? null);
    const held = isHeld(op.approval, op.stages.some((st) => st.stage === "receipt"));
    return (
      <div className="space-y-6">
        <div className="flex flex-wrap items-start justify-between gap-2">
          <nav aria-label="Breadcrumb" className="text-sm">
            <Link href="/operations" className="text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
              Operations
            </Link>
            {op.trajectory_id ? (
              <>
                {" / "}
                <Link href={`/trajectories/${encodeURIComponent(op.trajectory_id)}`} title={op.trajectory_id} className="break-all text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
                  {shortId(op.trajectory_id)}
                </Link>
              </>
            ) : null}
          </nav>
          <OperationKeys previous={queue.previous} next={queue.next} reviewer={reviewer} />
        </div>
        <header className="space-y-1">
          <h1 className={lead ? "break-words text-xl font-semibold sm:text-2xl" : "break-all font-mono text-xl font-semibold sm:text-2xl"}>{lead ?? op.operation_id}</h1>
          <p className="flex flex-wrap items-center gap-x-2 text-sm text-slate-700 dark:text-slate-300">
            {lead ? (
              <>
                <span className="break-all font-mono text-xs" title={op.operation_id}>
                  {shortId(op.operation_id)}
                </span>
                <CopyButton value={op.operation_id} />
              </>
            ) : null}
            {agent ? <span>by {agent}</span> : null}
          </p>
        </header>
        {/* The act first: what Reconcile concluded, why, whether to retry, and what a reviewer can do about it. */}
        <section aria-label="Outcome and review" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <p className="flex flex-wrap items-center gap-2 text-slate-800 dark:text-slate-200">
            <OutcomeBadge outcome={op.effective_outcome} />
            <StatusText op={{ ...op, review }} act={act ? { reviewer: act.reviewer ?? "a reviewer", recorded_at: act.recorded_at, withdraw_claim: act.withdraw_claim } : null} />
            {op.compared.presence_only && op.effective_outcome === "verified" ? (
              <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-800 dark:bg-slate-800 dark:text-slate-200" title="The intent names no fingerprint, so the read's content was not compared: the object's presence is the evidence.">
                verified by presence only
              </span>
            ) : null}
          </p>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Retry: {op.retry.decision}
            {op.needs_review ? " · needs a person to reconcile it" : ""}
            {op.claimed_outcome ? ` · the agent claimed ${op.claimed_outcome}` : ""}
          </p>
          {op.approval ? <ApprovalPanel op={op} me={me.email} canDecide={reviewer} now={renderedAt()} /> : null}
          {reviewer && !held ? (
            <CorrectionPanel
              operationId={op.operation_id}
              state={{
                outcome: op.effective_outcome,
                claim_withdrawn: op.claim_withdrawn,
                resolved_from: op.resolved_from,
                // The resolve in effect is the last correction; one that withdrew the claim found it standing.
                withdrawn_by_resolve: op.resolved_from !== null && op.corrections.at(-1)?.withdraw_claim === true,
              }}
              claimed={op.claimed_outcome}
              idempotency={op.idempotency as Idempotency}
              lastCorrectionId={op.corrections.at(-1)?.id ?? null}
              holder={holder}
              me={me.email}
              admin={roleAtLeast(me.role, "admin")}
              nextInQueue={queue.next}
              auditSample={sample !== null}
            />
          ) : null}
        </section>
        {sample ? (
          <p role="note" className="rounded-md border border-indigo-300 bg-indigo-50 px-3 py-2 text-sm text-indigo-950 dark:border-indigo-800 dark:bg-indigo-950 dark:text-indigo-100">
            Audit sample: drawn for review at {(sample.rate * 100).toLocaleString()} % of this tool&apos;s verified operations. A reviewer&apos;s
            check counts as ground truth in the <Link href="/metrics" className="underline">metrics</Link>: resolve it as verified (with evidence) if the effect is there, or retract it.
          </p>
        ) : null}
        {op.built_on_unverified_premise ? (
          <p role="note" className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100">
            Built on an unverified premise: an operation this one relied on is not verified, so whatever this step did may rest on
            something that did not happen (the paper&apos;s Proposition 1).
          </p>
        ) : null}
        <Timeline op={op} />
        <Attempts op={op} />
        <VerdictHistory op={op} />
        <CorrectionsHistory op={op} canNote={reviewer} />
        <Links op={op} />
      </div>
    );
  });
}
