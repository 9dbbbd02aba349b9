import { INGEST_PERMISSIONS } from "@/lib/api/authorize";
import { ingestOtlp } from "@/lib/api/otlp";
import { apiRoute, otherMethods } from "@/lib/api/route";

/** OTLP/HTTP trace export (lib/api/otlp.ts): the ingest permission, like POST /api/v1/receipts. */
export const POST = apiRoute(INGEST_PERMISSIONS, ({ req, principal }) => ingestOtlp(req, principal));

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
