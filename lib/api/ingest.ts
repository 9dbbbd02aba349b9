import "server-only";
import { can, type Principal } from "@/lib/auth/permissions";
import { clockSkewSeconds, type Sender } from "@/lib/domain/trust";
import type { IngestResult, ValidRecord } from "@/lib/store/ingest-records";
import { submitIngest } from "@/lib/store/ingest-queue";
import { ApiError, storeErrorAnswer } from "./errors";
import { checkIngest, checkRecords, MAX_RECORD_BYTES, type CheckContext, type Checked, type CheckedRecord } from "./ingest-check";

export { MAX_BATCH, MAX_RECORD_BYTES, MAX_REQUEST_BYTES } from "./ingest-check";

/** What a principal sends as: its email in the chain, who it is on the timeline, what it may do. */
export function senderOf(principal: Principal): Sender {
  return {
    actor: principal.email,
    sent_by: {
      via: principal.kind,
      user_id: principal.userId,
      email: principal.email,
      token_id: principal.kind === "token" ? principal.tokenId : null,
      token_name: principal.kind === "token" ? principal.tokenName : null,
    },
    rights: { userId: principal.userId, mayIngest: can(principal, "receipts:ingest"), mayVerify: can(principal, "receipts:verify"), isAdmin: principal.role === "admin" },
  };
}

/** Read once: a bad value fails the first ingest loudly rather than being ignored. */
let skew: number | null = null;
const maxClockSkew = () => (skew ??= clockSkewSeconds(process.env.RECONCILE_MAX_CLOCK_SKEW));

/** What checking a request needs to know of its sender and the server (ingest-check.ts). */
export function checkContext(sender: Sender, bodyBytes: number): CheckContext {
  return { rights: sender.rights, mayBeLarge: bodyBytes > MAX_RECORD_BYTES, skewSeconds: maxClockSkew() };
}

/** One record's answer: refused with its error, or stored (201 when it created its operation, else 200). */
export type Answer = { index: number; error: ApiError } | { index: number; status: 200 | 201; body: Extract<IngestResult, { body: unknown }>["body"] };

const answerOf = (r: IngestResult): Answer =>
  "error" in r ? { index: r.index, error: storeErrorAnswer(r.error) } : { index: r.index, status: r.created ? 201 : 200, body: r.body };

const asItem = (a: Answer) =>
  "error" in a ? { index: a.index, status: a.error.status, ...a.error.toJSON() } : { index: a.index, status: a.status, ...a.body };

const toValid = (sender: Sender) => (r: CheckedRecord): ValidRecord => ({ ...r, sender });

/** Checked items stored together; every item's answer, in the records' order. */
async function submitChecked(valid: CheckedRecord[], failed: { index: number; error: ApiError }[], sender: Sender): Promise<Answer[]> {
  const answers: Answer[] = [...failed, ...(await submitIngest(valid.map(toValid(sender)))).map(answerOf)];
  return answers.sort((a, b) => a.index - b.index);
}

/**
 * Many records, each decided on its own (what a batch does with its items): the invalid ones
 * get their error, the valid ones are stored together. Results in the records' order.
 */
export async function ingestList(records: unknown[], sender: Sender, mayBeLarge: boolean): Promise<Answer[]> {
  const { valid, failed } = await checkRecords(records, { ...checkContext(sender, 0), mayBeLarge });
  return submitChecked(valid, failed, sender);
}

/**
 * POST /api/v1/receipts, once checked (checkIngest, here or in a worker thread): the answer's
 * status and body. A batch stores its valid items together; an invalid or conflicting item
 * stores nothing.
 */
export async function ingestChecked(checked: Checked, principal: Principal): Promise<{ status: number; body: unknown }> {
  const sender = senderOf(principal);
  if (checked.kind === "batch") {
    const results = await submitChecked(checked.valid, checked.failed, sender);
    const allOk = results.every((r) => !("error" in r));
    return { status: allOk ? 200 : 207, body: { results: results.map(asItem) } };
  }
  const [result] = (await submitIngest([toValid(sender)(checked.record)])).map(answerOf);
  if ("error" in result) throw result.error;
  return { status: result.status, body: result.body };
}

/** POST /api/v1/receipts: one record, or `{"records": [...]}`, checked on this thread. Returns status and body. */
export async function ingestBody(body: unknown, principal: Principal, bodyBytes = Infinity): Promise<{ status: number; body: unknown }> {
  return ingestChecked(await checkIngest(body, checkContext(senderOf(principal), bodyBytes)), principal);
}
