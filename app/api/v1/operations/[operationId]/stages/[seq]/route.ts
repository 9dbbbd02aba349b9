import { ApiError } from "@/lib/api/errors";
import { apiRoute, otherMethods } from "@/lib/api/route";
import { getStagePayload } from "@/lib/store/queries/get-stage";

export const dynamic = "force-dynamic";

/**
 * One stage record's payload, whole, as a JSON download: what the operation page shows only in
 * part when it is large ("show all"). Same permission as reading the operation.
 */
export const GET = apiRoute<{ operationId: string; seq: string }>("operations:read", async ({ params }) => {
  const seq = /^[1-9]\d{0,9}$/.test(params.seq) ? Number(params.seq) : NaN;
  const stage = Number.isSafeInteger(seq) && seq <= 2_147_483_647 ? await getStagePayload(params.operationId, seq) : null;
  if (!stage) throw new ApiError("not_found", `operation ${params.operationId} has no stage record ${params.seq}`);
  const name = `${params.operationId}-${stage.stage}-${seq}.json`.replace(/[^\w.-]/g, "_");
  return new Response(stage.json, {
    headers: { "content-type": "application/json", "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
