import { readValidBody } from "@/lib/api/body";
import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { attemptRequestSchema } from "@/lib/domain/attempts";
import { roleAtLeast } from "@/lib/domain/permissions";
import { addAttempt, listAttempts } from "@/lib/store/ingest/attempts";

type Params = { operationId: string };

/** An operation's attempts, oldest first (also in GET /operations/{id} as `attempts`). */
export const GET = apiRoute<Params>("operations:read", async ({ params }) => {
  const attempts = await listAttempts(params.operationId);
  if (!attempts) throw new ApiError("not_found", `no operation with the id ${JSON.stringify(params.operationId)}`);
  return json({ operation_id: params.operationId, attempts });
});

/**
 * What the agent was told this time (the MCP gateway, with its ingest token):
 * `{"answer", "text", "outcome"?, "at"?, "session"?, "client"?}` → 201 with the chained attempt.
 * Only the operation's owner (any of the user's tokens or sessions) or an admin adds to it.
 */
export const POST = apiRoute<Params>("receipts:ingest", async ({ req, principal, params }) => {
  const attempt = await readValidBody(req, attemptRequestSchema, { maxBytes: 32 * 1024, depth: 4 });
  const added = await addAttempt(params.operationId, principal.email, attempt, (owner) => owner === principal.userId || roleAtLeast(principal.role, "admin"));
  return json({ operation_id: params.operationId, attempt: added }, 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
