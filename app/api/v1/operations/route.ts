import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { describeIssues } from "@/lib/domain/wire";
import { listOperations, listQuerySchema } from "@/lib/store/queries/list-operations";

export const GET = apiRoute("operations:read", async ({ req }) => {
  const params = Object.fromEntries(new URL(req.url).searchParams);
  const parsed = listQuerySchema.safeParse(params);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error, { root: "query", key: "parameter" });
    throw new ApiError("invalid_query", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues);
  }
  return json(await listOperations(parsed.data));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
