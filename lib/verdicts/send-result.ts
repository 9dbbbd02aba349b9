import { OutboundRefused } from "@/lib/outbound/guarded-request";

/** One attempt's end: the error it met (null: delivered) and the receiver's status when one answered. */
export type SendResult = { error: string | null; status: number | null };

/** Credentials refused: retried on the schedule, never given up (lib/verdicts/export.ts). */
export const authRefused = (status: number | null): boolean => status === 401 || status === 403;

/**
 * The attempt's error as the delivery log says it: an outbound refusal with its rule, a status
 * (401/403 as refused credentials, naming the setting), or the client's own message.
 */
export function sendError(vendor: string, keySetting: string, e: unknown): SendResult {
  if (e instanceof OutboundRefused) return { error: `${e.code}: ${e.message}`, status: null };
  const err = e as { status?: unknown; statusCode?: unknown; cause?: unknown; message?: unknown } | null;
  const cause = err?.cause instanceof OutboundRefused ? err.cause : null;
  if (cause) return { error: `${cause.code}: ${cause.message}`, status: null };
  const status = typeof err?.status === "number" ? err.status : typeof err?.statusCode === "number" ? err.statusCode : null;
  if (status && authRefused(status)) {
    return { error: `${vendor} refused the credentials (${status}): check ${keySetting}; the verdicts wait in the outbox and are tried again on the schedule`, status };
  }
  if (status) return { error: `${vendor} answered ${status}`, status };
  return { error: `${vendor}: ${typeof err?.message === "string" ? err.message.slice(0, 300) : String(e)}`, status: null };
}
