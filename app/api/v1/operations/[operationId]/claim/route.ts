import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { ApiError, validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { roleAtLeast } from "@/lib/domain/permissions";
import { claimHolder, claimOperation, releaseOperation } from "@/lib/store/review/assignments";

type Params = { operationId: string };
const claimSchema = z.object({ take_over: z.boolean().optional() }).strict();

/** Who holds the operation in the review queue (null: nobody). */
export const GET = apiRoute<Params>("operations:read", async ({ params }) => {
  const holder = await claimHolder(params.operationId);
  if (holder === undefined) throw new ApiError("not_found", `no operation with the id ${JSON.stringify(params.operationId)}`);
  return json({ operation_id: params.operationId, holder });
});

/** Claim it; `{"take_over": true}` takes over someone else's claim (recorded, naming them). */
export const POST = apiRoute<Params>("operations:correct", async ({ req, principal, params }) => {
  const body = validated(claimSchema, await readJsonBody(req, 1024));
  const r = await claimOperation(params.operationId, principal.email, { takeOver: body.take_over });
  return json({ operation_id: params.operationId, ...r });
});

/** Release it: the holder, or an admin; anyone else gets 409 claimed_by_other. */
export const DELETE = apiRoute<Params>("operations:correct", async ({ principal, params }) => {
  const r = await releaseOperation(params.operationId, principal.email, { admin: roleAtLeast(principal.role, "admin") });
  return json({ operation_id: params.operationId, holder: null, ...r });
});

export const { PUT, PATCH, OPTIONS } = otherMethods("GET", "POST", "DELETE");
