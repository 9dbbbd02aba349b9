import { approvalListQuery } from "@/lib/api/approvals";
import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { describeIssues } from "@/lib/domain/wire";
import { listApprovals } from "@/lib/store/review/approvals";

/** Calls held for approval by status (default pending), oldest request first. */
export const GET = apiRoute("operations:read", async ({ req }) => {
  const parsed = approvalListQuery.safeParse(Object.fromEntries(new URL(req.url).searchParams));
  if (!parsed.success) {
    const issues = describeIssues(parsed.error, { root: "query", key: "parameter" });
    throw new ApiError("invalid_query", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues);
  }
  return json(await listApprovals(parsed.data));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
