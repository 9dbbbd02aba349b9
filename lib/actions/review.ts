"use server";

import { revalidatePath } from "next/cache";
import { ApiError, knownError } from "@/lib/api/errors";
import { roleAtLeast } from "@/lib/domain/permissions";
import { claimOperation, releaseOperation } from "@/lib/store/review/assignments";
import { requireReviewer } from "./reviewer";
import { inProject } from "@/lib/store/db/project-context";

export type ClaimState = { error?: string } | null;

function refreshed(id: string): null {
  revalidatePath("/review");
  revalidatePath(`/operations/${encodeURIComponent(id)}`);
  return null;
}

/** The refusal in words; when someone else holds the operation, the page is redrawn to show who. */
function failed(id: string, e: ApiError): ClaimState {
  if (e.code === "claimed_by_other") refreshed(id);
  return { error: e.message.charAt(0).toUpperCase() + e.message.slice(1) + "." };
}

/** Claim (or, with take_over, take over) an operation from the review queue. */
export async function claimAction(_prev: ClaimState, form: FormData): Promise<ClaimState> {
  const id = String(form.get("id") ?? "");
  try {
    const me = await requireReviewer();
    await inProject(me.project, () => claimOperation(id, me.email, { takeOver: form.get("take_over") === "true" }));
  } catch (e) {
    const known = knownError(e);
    if (known) return failed(id, known);
    throw e;
  }
  return refreshed(id);
}

/** Release a claim: one's own, or (admins) anyone's. The store refuses everyone else. */
export async function releaseAction(_prev: ClaimState, form: FormData): Promise<ClaimState> {
  const id = String(form.get("id") ?? "");
  try {
    const me = await requireReviewer();
    await inProject(me.project, () => releaseOperation(id, me.email, { admin: roleAtLeast(me.role, "admin") }));
  } catch (e) {
    const known = knownError(e);
    if (known) return failed(id, known);
    throw e;
  }
  return refreshed(id);
}
