/**
 * What a call does to the world, as the recorder knows it (the gateway from its tool rule or the
 * upstream's annotations: docs/GATEWAY.md "Reads, idempotent calls and writes"):
 * - `write` (the default): its effect must be read back; uncertain and divergent go to review;
 * - `idempotent`: repeating it has no further effect, so an uncertain one is not queued for
 *   review (a repeat settles it) and its retry decision says a repeat is safe; divergent still is;
 * - `read`: it changes nothing: never queued for review, never counted in Metric 2.
 */
export const CALL_KINDS = ["read", "idempotent", "write"] as const;
export type CallKind = (typeof CALL_KINDS)[number];

/** The kind an operation's envelope names; anything else (or nothing) is a write. */
export function callKindOf(envelope: Record<string, unknown>): CallKind {
  const k = envelope.kind;
  return typeof k === "string" && (CALL_KINDS as readonly string[]).includes(k) ? (k as CallKind) : "write";
}
