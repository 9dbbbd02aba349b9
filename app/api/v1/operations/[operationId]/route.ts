import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { getOperation } from "@/lib/store/queries/get-operation";

export const GET = apiRoute<{ operationId: string }>("operations:read", async ({ params }) => {
  const operation = await getOperation(params.operationId);
  if (!operation) throw new ApiError("not_found", `no operation with the id ${params.operationId}`);
  return json(operation);
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
