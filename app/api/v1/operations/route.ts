import { validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { listOperations, listQuerySchema } from "@/lib/store/queries/list-operations";

export const GET = apiRoute("operations:read", async ({ req }) => {
  const params = Object.fromEntries(new URL(req.url).searchParams);
  return json(await listOperations(validated(listQuerySchema, params, "query")));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
