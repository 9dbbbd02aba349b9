import { ApiError } from "@/lib/api/errors";
import { awaitOperation, operationWaitSeconds } from "@/lib/api/operation-wait";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { projectPath } from "@/lib/domain/projects";

/** One operation; `?wait=N` (seconds, at most 60) long-polls until its outcome is decisive (lib/api/operation-wait.ts). */
export const GET = apiRoute<{ operationId: string }>("operations:read", async ({ req, params, principal }) => {
  const wait = operationWaitSeconds(new URL(req.url));
  const operation = await awaitOperation(params.operationId, wait, req.signal);
  if (!operation) throw new ApiError("not_found", `no operation with the id ${params.operationId}`);
  // Its page, for a caller that shows it to a person (the gateway's answers).
  return json({ ...operation, link: projectPath(principal.project.slug, `/operations/${encodeURIComponent(params.operationId)}`) });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
