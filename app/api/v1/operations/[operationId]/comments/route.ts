import { readValidBody } from "@/lib/api/body";
import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { commentRequestSchema } from "@/lib/domain/comments";
import { addComment, listComments } from "@/lib/store/review/comments";

type Params = { operationId: string };

/** An operation's notes, oldest first (also in GET /operations/{id} as `comments`). */
export const GET = apiRoute<Params>("operations:read", async ({ params }) => {
  const comments = await listComments(params.operationId);
  if (!comments) throw new ApiError("not_found", `no operation with the id ${JSON.stringify(params.operationId)}`);
  return json({ operation_id: params.operationId, comments });
});

/** A reviewer's note: `{"text": "…"}` → 201 with the chained note. */
export const POST = apiRoute<Params>("operations:correct", async ({ req, principal, params }) => {
  const { text } = await readValidBody(req, commentRequestSchema, { maxBytes: 32 * 1024, depth: 4 });
  return json({ operation_id: params.operationId, comment: await addComment(params.operationId, principal.email, text) }, 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
