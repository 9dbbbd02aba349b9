import "server-only";
import { isPlainObject } from "@/lib/domain/json";
import { systemSender } from "@/lib/domain/trust";
import { countCheck } from "@/lib/observability/metrics";
import { ruleExpectsFingerprint, verifierSender, type VerifierVersion } from "@/lib/domain/verifier";
import { verifierReadPayload, type VerifierReadInfo } from "@/lib/domain/verifier-check";
import { operationContext } from "@/lib/domain/verifier-template";
import type { ReadStatus } from "@/lib/domain/wire";
import { registerJobHandler } from "@/lib/jobs/worker";
import { reader } from "@/lib/store/db/db";
import type { Job } from "@/lib/store/work/jobs";
import { loadOperationRecords } from "@/lib/store/chain/stage-records";
import { VERIFIER_CHECK_JOB, type VerifierCheckPayload } from "@/lib/store/ingest/verifier-schedule";
import { verifierVersion } from "@/lib/store/settings/verifiers";
import { performCheck, type Performed } from "./perform";
import { commitCheckResult } from "./commit";
import { envSetting } from "@/lib/domain/settings";

/**
 * A verifier's scheduled check (VERIFIERS.md "Running them"): the job scheduled with the receipt
 * (lib/store/ingest/verifier-schedule.ts) performs the read and records it as an ordinary canonical-read
 * stage record sent by `verifier:<name>@<version>`, in the same transaction as finishJob, so a
 * check taken over after a crash is never recorded twice; results are committed in groups
 * (commit.ts). A failure (5xx, timeout, network, a
 * refusal of the guarded client) is tried again later with backoff; after the last attempt the
 * check records `unavailable`, with the error.
 */

/** Attempts of one check before it records `unavailable`. */
export const VERIFIER_ATTEMPTS = 5;

/** RECONCILE_VERIFIER_RETRY_MS (default 1000): the first wait before trying a failed check again; it doubles, up to a minute. */
export function verifierRetryDelayMs(attempts: number): number {
  const base = envSetting("RECONCILE_VERIFIER_RETRY_MS");
  return Math.min(60_000, base * 2 ** Math.max(0, attempts - 1));
}

export function registerVerifierJobs(): void {
  registerJobHandler(VERIFIER_CHECK_JOB, runVerifierCheck, { concurrency: envSetting("RECONCILE_VERIFIER_CONCURRENCY") });
}

/** The read a check records: the judged answer, or `unavailable` with the error. */
export function readFromCheck(v: VerifierVersion, p: Pick<VerifierCheckPayload, "check" | "of" | "window_closes_at"> | null, performed: Performed, extra: { attempts?: number; observedAt?: string; windowClosesAt?: string } = {}) {
  const answered = performed.kind === "answered";
  const status: ReadStatus = answered ? performed.judgement.status : "unavailable";
  const error = answered ? performed.judgement.error : `${performed.code === "template" ? "" : `${performed.code}: `}${performed.error}`;
  const info: VerifierReadInfo = {
    name: v.name,
    version: v.version,
    check: p?.check ?? null,
    of: p?.of ?? null,
    request: performed.request ?? { method: v.definition.request.method, url: v.definition.request.url, headers: v.definition.request.headers ?? {} },
    http_status: answered ? performed.http_status : null,
    rule: answered ? performed.judgement.rule : null,
    window_closes_at: p?.window_closes_at ?? extra.windowClosesAt ?? "",
    ...(answered && status === "match" && ruleExpectsFingerprint(v.definition, performed.judgement.rule) ? { fingerprint_expected: true } : {}),
    ...(error ? { error } : {}),
    ...(extra.attempts ? { attempts: extra.attempts } : {}),
    ...(answered ? { ms: performed.ms } : {}),
  };
  return verifierReadPayload({ status, observedAt: extra.observedAt ?? new Date().toISOString(), evidence: answered ? performed.judgement.evidence : null, info });
}

export async function runVerifierCheck(job: Job): Promise<void> {
  const p = job.payload as VerifierCheckPayload;
  const v = await verifierVersion(p.name, p.version);
  if (!v) {
    await commitCheckResult({ job, end: { status: "failed", error: `verifier ${verifierSender(p.name, p.version)} does not exist` } });
    return;
  }
  const records = await loadOperationRecords(await reader(), [p.operation_id]);
  const stages = records.get(p.operation_id)?.stages ?? [];
  // A match ends the window early: this verifier's later checks read nothing more.
  const matched = stages.some((s) => s.stage === "canonical_read" && s.sent_by.via === "system" && s.sent_by.name?.startsWith(`verifier:${v.name}@`) && isPlainObject(s.data) && s.data.status === "match");
  if (matched) {
    await commitCheckResult({ job, end: { status: "done", error: "not needed: the window already ended with a match" } });
    return;
  }
  const ctx = operationContext(p.operation_id, stages);
  const performed = await performCheck(v.definition, ctx);
  if (performed.retryable && job.attempts < VERIFIER_ATTEMPTS) {
    const why = performed.kind === "failed" ? `${performed.code}: ${performed.error}` : `HTTP ${performed.http_status}: ${performed.judgement.error}`;
    countCheck("retry");
    await commitCheckResult({ job, end: { retryAt: Date.now() + verifierRetryDelayMs(job.attempts), error: why } });
    return;
  }
  const read = readFromCheck(v, p, performed, { attempts: job.attempts });
  countCheck(String(read.status));
  const error = (read.verifier as VerifierReadInfo | undefined)?.error;
  await commitCheckResult({
    job,
    end: { status: "done", ...(error ? { error } : {}) },
    read: { operationId: p.operation_id, raw: { operation_id: p.operation_id, canonical_read: read }, sender: systemSender(verifierSender(v.name, v.version)) },
  });
}
