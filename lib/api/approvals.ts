import "server-only";
import { z } from "zod";
import type { ApprovalView } from "@/lib/store/review/approvals";
import { getApproval } from "@/lib/store/review/approvals";
import { validated } from "./errors";

/** The longest `?wait=` a long poll may ask for, in seconds. */
export const MAX_APPROVAL_WAIT_SECONDS = 30;
/** How often a long poll looks again (each look derives the operation from its records). */
const POLL_MS = 500;

const waitSchema = z.object({ wait: z.coerce.number().int().min(0).max(MAX_APPROVAL_WAIT_SECONDS).meta({ accepts: `a whole number of seconds from 0 to ${MAX_APPROVAL_WAIT_SECONDS}` }) });

/** `?wait=N`: 0 when absent; a clear 400 naming the parameter otherwise. */
export function waitSeconds(url: URL): number {
  const raw = url.searchParams.get("wait");
  if (raw === null || raw === "") return 0;
  return validated(waitSchema, { wait: raw }, "query").wait;
}

/**
 * Where an approval stands; with `wait`, answers as soon as it is no longer pending, or after
 * `wait` seconds (a long poll: the gateway waits on it). Stops early when the caller goes away.
 */
export async function awaitApproval(operationId: string, wait: number, signal: AbortSignal): Promise<ApprovalView> {
  const until = Date.now() + wait * 1000;
  let current = await getApproval(operationId);
  while (current.status === "pending" && Date.now() < until && !signal.aborted) {
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, until - Date.now()))));
    current = await getApproval(operationId);
  }
  return current;
}

export const approvalListQuery = z
  .object({
    status: z.enum(["pending", "approved", "denied", "expired"]).optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
  })
  .strict();
