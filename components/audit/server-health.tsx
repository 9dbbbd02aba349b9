import type { Readiness } from "@/lib/observability/health";
import { FACTS_GRID } from "@/components/audit/facts";
import type { Vitals } from "@/lib/store/queries/vitals";

/** "42 s", "5 min", "3 h 10 min", "2 d 4 h": a wait, for a person. */
export function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  const h = Math.floor(s / 3600);
  if (h < 48) return `${h} h ${Math.round((s % 3600) / 60)} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

function bytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/**
 * The audit page's "Server health" panel: what /api/health/ready and GET /metrics say, read as
 * the page renders (docs/DEPLOY.md "Metrics and logs"), for whoever is on call.
 */
export function ServerHealth({ ready, vitals, now }: { ready: Readiness; vitals: Vitals; now: number }) {
  const c = ready.checks;
  const problems = [
    !c.database.ok && c.database.error,
    !c.migrations.ok && (c.migrations.error ?? `migrations not applied: ${c.migrations.missing?.join(", ")}`),
    !c.jobs.ok && `the job worker has not gone round for ${span((c.jobs.last_beat_ms_ago ?? 0) / 1000)}`,
  ].filter(Boolean);
  const lag = vitals.jobsDue.filter((j) => j.due > 0);
  const dt = "text-slate-600 dark:text-slate-400";
  return (
    <section aria-labelledby="server-health" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800" data-testid="server-health">
      <h2 id="server-health" className="font-semibold">Server health</h2>
      <dl className={FACTS_GRID}>
        <dt className={dt}>readiness</dt>
        <dd data-testid="readiness">
          {ready.ready ? "ready" : `not ready: ${problems.join("; ")}`}
          {c.jobs.worker === "off" ? " (this instance runs no background jobs)" : ""}
        </dd>
        <dt className={dt}>chain head</dt>
        <dd className="tabular-nums" data-testid="chain-head">
          {vitals.chains.length === 1 ? `seq ${vitals.chains[0].seq.toLocaleString("en")}` : vitals.chains.map((h) => `chain ${h.chain}: seq ${h.seq.toLocaleString("en")}`).join(", ")}
        </dd>
        <dt className={dt}>checkpoint age</dt>
        <dd data-testid="checkpoint-age">{vitals.checkpoint ? `${span((now - Date.parse(vitals.checkpoint.time)) / 1000)} since the last one` : "no checkpoint yet"}</dd>
        <dt className={dt}>job lag</dt>
        <dd data-testid="job-lag">{lag.length ? lag.map((j) => `${j.kind}: ${j.due.toLocaleString("en")} due, the oldest waiting ${span((now - j.oldestDueAt) / 1000)}`).join("; ") : "none: no job is waiting past its time"}</dd>
        {vitals.databaseBytes !== null ? (
          <>
            <dt className={dt}>this project&apos;s database size</dt>
            <dd className="tabular-nums">{bytes(vitals.databaseBytes)}</dd>
          </>
        ) : null}
      </dl>
      <p className="text-xs text-slate-600 dark:text-slate-400">
        The same figures for Prometheus: <code className="font-mono">GET /metrics</code> with a token carrying the <code className="font-mono">metrics</code> scope
        (docs/DEPLOY.md, &ldquo;Metrics and logs&rdquo;).
      </p>
    </section>
  );
}
