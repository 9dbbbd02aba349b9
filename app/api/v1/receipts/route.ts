import { readJsonBodySized } from "@/lib/api/body";
import { ingestBody, MAX_REQUEST_BYTES } from "@/lib/api/ingest";
import { INGEST_PERMISSIONS } from "@/lib/api/authorize";
import { apiRoute, json, otherMethods } from "@/lib/api/route";

export const POST = apiRoute(INGEST_PERMISSIONS, async ({ req, principal }) => {
  const { value, bytes } = await readJsonBodySized(req, MAX_REQUEST_BYTES);
  const result = await ingestBody(value, principal, bytes);
  return json(result.body, result.status);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
