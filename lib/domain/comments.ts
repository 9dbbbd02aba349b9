import { z } from "zod";
import { textProblem } from "./json";

/**
 * Reviewers' notes on an operation (issue 19): a hand-over without a second tool. A note is a
 * chained record of kind "comment", append-only like every act; it changes no outcome, no
 * claim and no count.
 */
export const MAX_COMMENT_LENGTH = 4000;

export const commentRequestSchema = z
  .object({
    text: z
      .string()
      .trim()
      .min(1, "write the note")
      .max(MAX_COMMENT_LENGTH, `a note is at most ${MAX_COMMENT_LENGTH} characters`)
      .refine((v) => !textProblem(v), { error: (issue) => textProblem(issue.input as string) ?? "is not valid text" }),
  })
  .strict();
export type CommentRequest = z.infer<typeof commentRequestSchema>;

/** What the chain holds for a note (the author is the record's actor). */
export type CommentPayload = { id: string; text: string };
