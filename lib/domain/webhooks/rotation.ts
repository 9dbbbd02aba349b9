import { z } from "zod";

/**
 * Rotating an endpoint's signing secret (`POST /api/v1/webhooks/{id}/rotate-secret`): a new
 * secret, shown once; the one it replaces keeps signing too (a second signature) for an overlap,
 * so that receivers can switch at their pace; after it, only the new one signs.
 */

/** The longest overlap an admin may ask for: a week. */
export const MAX_OVERLAP_HOURS = 168;

/** The request's body: the overlap in hours (0 drops the old secret at once; fractions allowed); absent, the server's setting. */
export const rotateSecretSchema = z
  .object({
    overlap_hours: z
      .number()
      .min(0, "at least 0 (0 drops the old secret at once)")
      .max(MAX_OVERLAP_HOURS, `at most ${MAX_OVERLAP_HOURS} (a week)`)
      .optional(),
  })
  .strict();
export type RotateSecret = z.infer<typeof rotateSecretSchema>;

/** Until when the replaced secret still signs, or null when it is dropped at once (an overlap of 0). */
export function overlapEnd(now: Date, overlapHours: number): string | null {
  if (!(overlapHours > 0)) return null;
  return new Date(now.getTime() + Math.round(overlapHours * 3_600_000)).toISOString();
}

/** Whether a previous secret that is accepted until `until` (ISO) still signs at `at`. */
export function stillAccepted(until: string | null, at: Date): boolean {
  if (!until) return false;
  const end = Date.parse(until);
  return Number.isFinite(end) && end > at.getTime();
}
