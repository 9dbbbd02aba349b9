import "server-only";
import { z } from "zod";
import type { ApprovalView } from "@/lib/store/review/approvals";
import { getApproval } from "@/lib/store/review/approvals";
import { ApiError } from "./errors";

/** The longest `?wait=` a long poll may ask for, in seconds. */
export const MAX_APPROVAL_WAIT_SECONDS = 30;
/** How often a long poll looks again (each look derives the operation from its records). */
const POLL_MS = 500;

const waitSchema = z.coerce.number().int("wait is a whole number of seconds").min(0, "wait is at least 0").max(MAX_APPROVAL_WAIT_SECONDS, `wait is at most ${MAX_APPROVAL_WAIT_SECONDS} seconds`);

/** `?wait=N`: 0 when absent; a clear 400 naming the parameter otherwise. */
export function waitSeconds(url: URL): number {
  const raw = url.searchParams.get("wait");
  if (raw === null || raw === "") return 0;
  const parsed = waitSchema.safeParse(raw);
  if (!parsed.success) throw new ApiError("invalid_query", `wait: ${parsed.error.issues[0]?.message ?? "not a number of seconds"} (0–${MAX_APPROVAL_WAIT_SECONDS})`);
  return parsed.data;
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
    status: z.enum(["pending", "approved", "denied", "expired"], { error: "status is one of pending, approved, denied, expired" }).optional(),
    limit: z.coerce.number().int().min(1).max(200, "limit is at most 200").optional(),
  })
  .strict();
