import client, { type Counter, type Gauge, type Histogram, type Registry } from "prom-client";
import { currentProjectKey } from "@/lib/store/db/project-context";

/**
 * The server's Prometheus metrics (docs/DEPLOY.md "Metrics and logs"), one registry per
 * process. It lives on globalThis: the production server (lib/cli/serve.ts) and Next.js's route
 * bundles each load their own copy of this module, and a counter moved by a route handler must
 * be the one GET /metrics reads (metrics.itest.ts checks it on the real server).
 *
 * Counters and histograms count what this process saw since it started (per instance: sum them
 * across instances in PromQL); gauges about the databases are read at scrape time, each
 * project's from its own (vitals.ts, scrape.ts). What belongs to a project carries its slug in
 * `project`: ingest, webhook deliveries, verifier checks, jobs, chains, checkpoints, size.
 */
export type Metrics = {
  registry: Registry;
  ingestRecords: Counter<"outcome" | "project">;
  ingestSeconds: Histogram<"route">;
  ingestQueue: Gauge;
  ingestOverloaded: Counter;
  jobsDue: Gauge<"kind" | "project">;
  jobLag: Gauge<"kind" | "project">;
  webhookDeliveries: Counter<"result" | "project">;
  verifierChecks: Counter<"result" | "project">;
  chainHead: Gauge<"chain" | "project">;
  checkpointAge: Gauge<"project">;
  databaseBytes: Gauge<"project">;
  projectReadable: Gauge<"project">;
  httpSeconds: Histogram<"route" | "method" | "status">;
};

/** Ingest outcomes, per record: a new operation, a new stage of a known one, a record already stored, a refusal. */
export const INGEST_OUTCOMES = ["created", "appended", "duplicate", "refused"] as const;
export type IngestOutcome = (typeof INGEST_OUTCOMES)[number];

const root = globalThis as unknown as { __reconcileMetrics?: Metrics };

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function make(): Metrics {
  const registry = new client.Registry();
  // prom-client's process metrics under their usual names (process_cpu_seconds_total, nodejs_heap_size_used_bytes…).
  client.collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const m: Metrics = {
    registry,
    ingestRecords: new client.Counter({ name: "reconcile_ingest_records_total", help: "Records received for ingest, by outcome (created, appended, duplicate, refused) and project.", labelNames: ["outcome", "project"], registers }),
    ingestSeconds: new client.Histogram({ name: "reconcile_ingest_request_seconds", help: "Time to answer an ingest request (receipts, OTLP), by route.", labelNames: ["route"], buckets: SECONDS, registers }),
    ingestQueue: new client.Gauge({ name: "reconcile_ingest_queue_records", help: "Records waiting in this process's group-commit queue.", registers }),
    ingestOverloaded: new client.Counter({ name: "reconcile_ingest_overloaded_total", help: "Ingest requests refused 429 overloaded (the group-commit queue was full).", registers }),
    jobsDue: new client.Gauge({ name: "reconcile_jobs_due", help: "Pending background jobs whose time has come, by project and kind.", labelNames: ["project", "kind"], registers }),
    jobLag: new client.Gauge({ name: "reconcile_job_lag_seconds", help: "How long the oldest due job of each kind has waited past its time, by project.", labelNames: ["project", "kind"], registers }),
    webhookDeliveries: new client.Counter({ name: "reconcile_webhook_deliveries_total", help: "Webhook delivery attempts, by project and result (delivered, retry, failed, gone).", labelNames: ["project", "result"], registers }),
    verifierChecks: new client.Counter({ name: "reconcile_verifier_checks_total", help: "Verifier checks run, by project and result (the read's status, or retry).", labelNames: ["project", "result"], registers }),
    chainHead: new client.Gauge({ name: "reconcile_chain_head_seq", help: "The seq of each hash chain's last record, by project.", labelNames: ["project", "chain"], registers }),
    checkpointAge: new client.Gauge({ name: "reconcile_checkpoint_age_seconds", help: "Seconds since each project's last signed checkpoint (absent: none yet).", labelNames: ["project"], registers }),
    databaseBytes: new client.Gauge({ name: "reconcile_database_bytes", help: "Each project's database size on disk (SQLite: its main file; PostgreSQL: its schema's tables with their indexes and TOAST).", labelNames: ["project"], registers }),
    projectReadable: new client.Gauge({ name: "reconcile_project_readable", help: "1 when the scrape could read the project's database, 0 when it could not (its other gauges are then absent).", labelNames: ["project"], registers }),
    httpSeconds: new client.Histogram({ name: "reconcile_http_request_seconds", help: "Time to answer each HTTP request, by route template, method and status.", labelNames: ["route", "method", "status"], buckets: SECONDS, registers }),
  };
  return m;
}

export function metrics(): Metrics {
  return (root.__reconcileMetrics ??= make());
}

/** Every ingest outcome of a project from zero, so a rate() has a series to start from (at each scrape, for each project). */
export function startIngestSeries(project: string): void {
  for (const outcome of INGEST_OUTCOMES) metrics().ingestRecords.inc({ outcome, project }, 0);
}

/** Records of the current project's ingest, by outcome. */
export function countIngest(outcome: IngestOutcome, n = 1): void {
  if (n > 0) metrics().ingestRecords.inc({ outcome, project: currentProjectKey() }, n);
}

/** A webhook delivery attempt of the current project's. */
export function countDelivery(result: string): void {
  metrics().webhookDeliveries.inc({ result, project: currentProjectKey() });
}

/** A verifier check of the current project's. */
export function countCheck(result: string): void {
  metrics().verifierChecks.inc({ result, project: currentProjectKey() });
}
