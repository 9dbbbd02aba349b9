import { approvalListQuery } from "@/lib/api/approvals";
import { validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { listApprovals } from "@/lib/store/review/approvals";

/** Calls held for approval by status (default pending), oldest request first. */
export const GET = apiRoute("operations:read", async ({ req }) => {
  return json(await listApprovals(validated(approvalListQuery, Object.fromEntries(new URL(req.url).searchParams), "query")));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
