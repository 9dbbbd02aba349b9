import { readValidBody } from "@/lib/api/body";
import { awaitApproval, waitSeconds } from "@/lib/api/approvals";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { approvalDecisionSchema } from "@/lib/domain/approval";
import { decideApproval } from "@/lib/store/review/approvals";

type Params = { operationId: string };

/** Where the held call's approval stands; `?wait=N` (at most 30) long-polls until it is decided or expires. */
export const GET = apiRoute<Params>("operations:read", async ({ req, params }) => {
  const wait = waitSeconds(new URL(req.url));
  return json(await awaitApproval(params.operationId, wait, req.signal));
});

/** A reviewer approves or denies the held call: `{"decision": "approve" | "deny", "reason"}`. */
export const POST = apiRoute<Params>("operations:correct", async ({ req, principal, params }) => {
  const request = await readValidBody(req, approvalDecisionSchema, { maxBytes: 16 * 1024, depth: 4 });
  const approval = await decideApproval({ operationId: params.operationId, request, reviewer: principal.email, reviewerId: principal.userId });
  return json(approval, 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
