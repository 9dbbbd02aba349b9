"use server";

import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { ApiError, knownError } from "@/lib/api/errors";
import { can, roleAtLeast } from "@/lib/auth/permissions";
import { sourceAddress } from "@/lib/auth/request";
import { currentPrincipal } from "@/lib/auth/session";
import { claimOperation, releaseOperation } from "@/lib/store/assignments";
import { writeTransaction } from "@/lib/store/db";
import { recordSecurityEvent } from "@/lib/store/security-events";

export type ClaimState = { error?: string } | null;

async function reviewer() {
  const me = await currentPrincipal();
  if (!me) redirect("/login");
  if (!can(me, "operations:correct")) {
    const h = await headers();
    await writeTransaction((tx) =>
      recordSecurityEvent(tx, me.email, { type: "authorization.refused", permission: "operations:correct", method: "ACTION", path: h.get("referer") ?? "", source: sourceAddress(h) }),
    );
    throw new ApiError("forbidden", "only reviewers and admins work the review queue");
  }
  return me;
}

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
    const me = await reviewer();
    await claimOperation(id, me.email, { takeOver: form.get("take_over") === "true" });
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
    const me = await reviewer();
    await releaseOperation(id, me.email, { admin: roleAtLeast(me.role, "admin") });
  } catch (e) {
    const known = knownError(e);
    if (known) return failed(id, known);
    throw e;
  }
  return refreshed(id);
}
