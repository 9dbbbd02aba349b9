import "server-only";
import { z } from "zod";
import { wakeJobs } from "@/lib/jobs/worker";
import { currentOutcome, getOperation } from "@/lib/store/queries/get-operation";
import { verifierChecksDone } from "@/lib/domain/verifier-check";
import { validated } from "./errors";

/**
 * `GET /api/v1/operations/{id}?wait=N`: the operation once its outcome is decisive (anything but
 * uncertain: a verifier's read, a reviewer's resolve), or once its verifiers have made their last
 * check, or as it stands after N seconds (at most 60). The MCP gateway's `await_verdict` waits on it right after a receipt, so the verifier's
 * first check (at `0s`) is woken here rather than at the job worker's next poll, and the wait
 * looks again often at first, when the verdict is likeliest, then less often.
 */
export const MAX_OPERATION_WAIT_SECONDS = 60;

const waitSchema = z.object({
  wait: z.coerce
    .number()
    .min(0)
    .max(MAX_OPERATION_WAIT_SECONDS)
    .meta({ accepts: `a number of seconds from 0 to ${MAX_OPERATION_WAIT_SECONDS}` }),
});

/** `?wait=N` in seconds (fractions allowed): 0 when absent; a clear 400 naming the parameter otherwise. */
export function operationWaitSeconds(url: URL): number {
  const raw = url.searchParams.get("wait");
  if (raw === null || raw === "") return 0;
  return validated(waitSchema, { wait: raw }, "query").wait;
}

/** How long to wait before looking again, `ms` into the wait: 20 ms for the first second, then 100 ms, then 250 ms. */
export function nextLookMs(ms: number): number {
  return ms < 1000 ? 20 : ms < 5000 ? 100 : 250;
}

const decisive = (now: { outcome: string } | null) => now === null || now.outcome !== "uncertain";

/** Its verifiers' reads, as verifierChecksDone takes them. */
const readsOf = (op: NonNullable<Awaited<ReturnType<typeof getOperation>>>) => op.stages.filter((s) => s.stage === "canonical_read").map((s) => ({ data: s.payload, sent_by: s.sent_by }));

/**
 * Waits while the outcome is uncertain, at most `waitSeconds`; ends early when it is decisive, or
 * when the operation changed and every verifier that read it has made its last check (nothing
 * more is scheduled to decide it: a window that closed on `unavailable`).
 */
export async function awaitOperation(operationId: string, waitSeconds: number, signal: AbortSignal) {
  let now = await currentOutcome(operationId);
  if (waitSeconds > 0 && !decisive(now)) {
    // A verifier check due now runs at once instead of at the worker's next poll.
    wakeJobs();
    const started = Date.now();
    const until = started + waitSeconds * 1000;
    let seen = now!.lastSeq;
    while (!signal.aborted && Date.now() < until) {
      await new Promise((r) => setTimeout(r, Math.min(nextLookMs(Date.now() - started), Math.max(0, until - Date.now()))));
      now = await currentOutcome(operationId);
      if (decisive(now)) break;
      if (now!.lastSeq !== seen) {
        seen = now!.lastSeq;
        const op = await getOperation(operationId);
        if (op && verifierChecksDone(readsOf(op))) return op;
      }
    }
  }
  return getOperation(operationId);
}
