import { readJsonBody } from "@/lib/api/body";
import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { correctionRequestSchema } from "@/lib/domain/corrections";
import { checkJsonShape } from "@/lib/domain/json";
import { describeIssues } from "@/lib/domain/wire";
import { correctOperation } from "@/lib/store/correct-operation";

export const POST = apiRoute<{ operationId: string }>("operations:correct", async ({ req, principal, params }) => {
  const body = await readJsonBody(req, 64 * 1024);
  const shape = checkJsonShape(body, 8);
  if (shape) throw new ApiError("invalid_request", `${shape.path}: ${shape.message}`, [shape]);
  const parsed = correctionRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error, { root: "request" });
    throw new ApiError("invalid_request", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues);
  }
  const result = await correctOperation({ operationId: params.operationId, request: parsed.data, reviewer: principal.email });
  return json(result, 201);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
