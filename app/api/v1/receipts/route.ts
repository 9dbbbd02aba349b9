import { readJsonBody } from "@/lib/api/body";
import { ingestBody, MAX_REQUEST_BYTES } from "@/lib/api/ingest";
import { apiRoute, json } from "@/lib/api/route";

export const POST = apiRoute("receipts:ingest", async ({ req, principal }) => {
  const body = await readJsonBody(req, MAX_REQUEST_BYTES);
  const result = await ingestBody(body, principal.email);
  return json(result.body, result.status);
});
