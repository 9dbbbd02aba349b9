import { z } from "zod";
import { textProblem } from "./json";
import { isRfc3339 } from "./time";

/**
 * What the agent was told, and each time it tried again (issues 48 and 49): a chained record of
 * kind "attempt" on an operation, written by the MCP gateway. A repeat it refused, replayed or held
 * leaves one, so a reviewer sees the agent tried again; a call answered with Reconcile's verdict
 * (`await_verdict`) leaves one saying which; a call whose fate is unknown says what happened ("the
 * upstream did not answer within 60 s"). It changes no outcome, no claim and no count; the
 * recorder's own token writes it (the record's actor).
 */
export const ATTEMPT_ANSWERS = [
  /** The call went to the upstream and its answer to the agent, with the outcome known then. */
  "forwarded",
  /** Answered with Reconcile's verdict after waiting for it (await_verdict). */
  "verdict",
  /** A repeat answered from the record of a verified call: not sent again. */
  "replayed",
  /** A repeat refused: not sent. */
  "refused",
  /** A repeat waiting on the same approval. */
  "waiting",
  /** Sent, but what became of it is unknown (a timeout, a dropped connection, a cancellation). */
  "fate_unknown",
  /** Not sent at all (the upstream was down, the request id unusable). */
  "not_sent",
] as const;
export type AttemptAnswer = (typeof ATTEMPT_ANSWERS)[number];

const text = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .refine((v) => !textProblem(v), { error: (issue) => textProblem(issue.input as string) ?? "is not valid text" });

export const MAX_ATTEMPT_TEXT = 4000;

export const attemptRequestSchema = z
  .object({
    /** What the recorder did with this attempt. */
    answer: z.enum(ATTEMPT_ANSWERS, { error: `one of ${ATTEMPT_ANSWERS.join(", ")}` }),
    /** The outcome the agent was told (verified, uncertain, divergent, rejected, …), when one was. */
    outcome: text(40).optional(),
    /** What the agent was told, in words (the gateway's text, cut to fit). */
    text: text(MAX_ATTEMPT_TEXT).min(1, "say what the agent was told"),
    /** When the answer went (RFC 3339); the record's own time when absent. */
    at: z.string().refine(isRfc3339, "must be an RFC 3339 date-time, e.g. 2026-08-28T14:02:11Z").optional(),
    /** The MCP session (or other connection) the attempt came in on. */
    session: text(200).optional(),
    /** The calling agent as it named itself (MCP clientInfo). */
    client: z.object({ name: text(200), version: text(100).optional() }).strict().optional(),
  })
  .strict();
export type AttemptRequest = z.infer<typeof attemptRequestSchema>;

/** What the chain holds for an attempt (the recorder is the record's actor). */
export type AttemptPayload = AttemptRequest & { id: string };
