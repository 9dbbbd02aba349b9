"use server";

import { revalidatePath } from "next/cache";
import { knownError } from "@/lib/api/errors";
import { correctionRequestSchema } from "@/lib/domain/corrections";
import { describeRefusal } from "@/lib/domain/refusal";
import { correctOperation } from "@/lib/store/review/correct-operation";
import { requireReviewer } from "./reviewer";
import { inProject } from "@/lib/store/db/project-context";
import { BULK_LIMIT, type BulkResult, type BulkState } from "./review-bulk-types";

/**
 * Bulk triage from the review queue: one action (resolve as not applied, or retract) and one
 * reason for many operations. Each is still its own correction through the one correction use
 * case, naming the correction it follows and subject to the claim rules; a refusal on one
 * (a 409 because someone corrected it meanwhile, or another reviewer's claim) is reported for
 * that one and the others stand. At most BULK_LIMIT per request, one after another.
 */
export async function bulkCorrectAction(_prev: BulkState, form: FormData): Promise<BulkState> {
  let me;
  try {
    me = await requireReviewer();
  } catch (e) {
    const known = knownError(e);
    if (known) return { error: known.message.charAt(0).toUpperCase() + known.message.slice(1) + "." };
    throw e;
  }
  const action = String(form.get("action") ?? "");
  const ids = form.getAll("id").map(String);
  const follows = form.getAll("follows").map(String);
  if (action !== "resolve_not_applied" && action !== "retract") return { error: "Choose what to do: resolve as not applied, or retract." };
  if (!ids.length) return { error: "Select at least one operation." };
  if (ids.length > BULK_LIMIT) return { error: `At most ${BULK_LIMIT} operations at a time: select fewer.` };
  if (follows.length !== ids.length) return { error: "Each selected operation must name the correction it follows: reload the page and try again." };
  const request = {
    action: action === "retract" ? "retract" : "resolve",
    ...(action === "resolve_not_applied" ? { outcome: "not_applied" } : {}),
    reason: String(form.get("reason") ?? ""),
  };
  const base = correctionRequestSchema.safeParse(request);
  if (!base.success) return { error: `The ${describeRefusal(base.error, { input: request, schema: correctionRequestSchema }).message}.` };

  const results: BulkResult[] = [];
  for (const [i, id] of ids.entries()) {
    try {
      const done = await inProject(me.project, () => correctOperation({ operationId: id, request: { ...base.data, expected_last_correction_id: follows[i] || null }, reviewer: me.email }));
      results.push({ id, ok: true, effective_outcome: done.effective_outcome });
    } catch (e) {
      const known = knownError(e);
      if (!known) throw e;
      results.push({ id, ok: false, code: known.code, message: known.message.charAt(0).toUpperCase() + known.message.slice(1) + "." });
    }
    revalidatePath(`/operations/${encodeURIComponent(id)}`);
  }
  revalidatePath("/review");
  return { results };
}
