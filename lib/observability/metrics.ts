import client, { type Counter, type Gauge, type Histogram, type Registry } from "prom-client";

/**
 * The server's Prometheus metrics (shared/OPERATIONS.md "Metrics and logs"), one registry per
 * process. It lives on globalThis: the production server (lib/cli/serve.ts) and Next.js's route
 * bundles each load their own copy of this module, and a counter moved by a route handler must
 * be the one GET /metrics reads (metrics.itest.ts checks it on the real server).
 *
 * Counters and histograms count what this process saw since it started (per instance: sum them
 * across instances in PromQL); gauges about the database are read at scrape time (vitals.ts).
 * No `project` label yet: projects do not exist (issue 38 §1).
 */
export type Metrics = {
  registry: Registry;
  ingestRecords: Counter<"outcome">;
  ingestSeconds: Histogram<"route">;
  ingestQueue: Gauge;
  ingestOverloaded: Counter;
  jobsDue: Gauge<"kind">;
  jobLag: Gauge<"kind">;
  webhookDeliveries: Counter<"result">;
  verifierChecks: Counter<"result">;
  chainHead: Gauge<"chain">;
  checkpointAge: Gauge;
  databaseBytes: Gauge;
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
    ingestRecords: new client.Counter({ name: "reconcile_ingest_records_total", help: "Records received for ingest, by outcome (created, appended, duplicate, refused).", labelNames: ["outcome"], registers }),
    ingestSeconds: new client.Histogram({ name: "reconcile_ingest_request_seconds", help: "Time to answer an ingest request (receipts, OTLP), by route.", labelNames: ["route"], buckets: SECONDS, registers }),
    ingestQueue: new client.Gauge({ name: "reconcile_ingest_queue_records", help: "Records waiting in this process's group-commit queue.", registers }),
    ingestOverloaded: new client.Counter({ name: "reconcile_ingest_overloaded_total", help: "Ingest requests refused 429 overloaded (the group-commit queue was full).", registers }),
    jobsDue: new client.Gauge({ name: "reconcile_jobs_due", help: "Pending background jobs whose time has come, by kind.", labelNames: ["kind"], registers }),
    jobLag: new client.Gauge({ name: "reconcile_job_lag_seconds", help: "How long the oldest due job of each kind has waited past its time.", labelNames: ["kind"], registers }),
    webhookDeliveries: new client.Counter({ name: "reconcile_webhook_deliveries_total", help: "Webhook delivery attempts, by result (delivered, retry, failed, gone).", labelNames: ["result"], registers }),
    verifierChecks: new client.Counter({ name: "reconcile_verifier_checks_total", help: "Verifier checks run, by result (the read's status, or retry).", labelNames: ["result"], registers }),
    chainHead: new client.Gauge({ name: "reconcile_chain_head_seq", help: "The seq of each hash chain's last record.", labelNames: ["chain"], registers }),
    checkpointAge: new client.Gauge({ name: "reconcile_checkpoint_age_seconds", help: "Seconds since the last signed checkpoint (absent: none yet).", registers }),
    databaseBytes: new client.Gauge({ name: "reconcile_database_bytes", help: "The database's size on disk (SQLite: its main file; PostgreSQL: pg_database_size).", registers }),
    httpSeconds: new client.Histogram({ name: "reconcile_http_request_seconds", help: "Time to answer each HTTP request, by route template, method and status.", labelNames: ["route", "method", "status"], buckets: SECONDS, registers }),
  };
  // Every outcome from zero, so a rate() has a series to start from.
  for (const o of INGEST_OUTCOMES) m.ingestRecords.inc({ outcome: o }, 0);
  return m;
}

export function metrics(): Metrics {
  return (root.__reconcileMetrics ??= make());
}

export function countIngest(outcome: IngestOutcome, n = 1): void {
  if (n > 0) metrics().ingestRecords.inc({ outcome }, n);
}
