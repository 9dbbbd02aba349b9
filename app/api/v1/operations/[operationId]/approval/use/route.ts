import { z } from "zod";
import { readValidBody } from "@/lib/api/body";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { roleAtLeast } from "@/lib/domain/permissions";
import { useApproval } from "@/lib/store/review/approvals";

type Params = { operationId: string };
const useSchema = z
  .object({
    params_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'params_digest is "sha256:" and 64 hex digits'),
    /** The version of the rule in force at the gateway now: an approval given under another is not used. */
    rule_version: z.string().min(1).max(200).optional(),
  })
  .strict();

/**
 * The gateway takes an approved call to forward it: once, with the approved arguments' digest,
 * by the account that asked (409 for a second taker or other arguments).
 */
export const POST = apiRoute<Params>("receipts:ingest", async ({ req, principal, params }) => {
  const { params_digest, rule_version } = await readValidBody(req, useSchema, { maxBytes: 4 * 1024, depth: 2 });
  const approval = await useApproval({ operationId: params.operationId, paramsDigest: params_digest, ruleVersion: rule_version, user: principal.email, userId: principal.userId, admin: roleAtLeast(principal.role, "admin") });
  return json(approval, 201);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
