import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { secretsWithUse } from "@/lib/api/verifier-secrets";

/** Every stored verifier secret (never a value), the enabled verifiers sending each, and the names they send that are not stored. */
export const GET = apiRoute("verifiers:manage", async () => json(await secretsWithUse()));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
