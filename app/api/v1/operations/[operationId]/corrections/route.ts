import { readValidBody } from "@/lib/api/body";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { correctionRequestSchema } from "@/lib/domain/corrections";
import { correctOperation } from "@/lib/store/review/correct-operation";

export const POST = apiRoute<{ operationId: string }>("operations:correct", async ({ req, principal, params }) => {
  const request = await readValidBody(req, correctionRequestSchema, { maxBytes: 64 * 1024, depth: 8 });
  const result = await correctOperation({ operationId: params.operationId, request, reviewer: principal.email });
  return json(result, 201);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
