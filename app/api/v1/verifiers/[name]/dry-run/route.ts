import { z } from "zod";
import { ApiError, validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { fingerprintRuleDryRunWarnings } from "@/lib/api/verifier-fingerprints";
import { checkName, parseDefinition, readVerifierBody } from "@/lib/api/verifiers";
import { isPlainObject } from "@/lib/domain/json";
import { operationIdSchema } from "@/lib/domain/wire";
import { latestVerifier } from "@/lib/store/settings/verifiers";
import { dryRun } from "@/lib/verifiers/dry-run";

type Params = { name: string };
const bodySchema = z.strictObject({ operation_id: operationIdSchema, definition: z.unknown().optional() });

/**
 * Tests the verifier (its latest version, or the draft `definition` sent along) against an
 * operation: the request made (secrets masked), the response, the read it would record.
 * Records nothing.
 */
export const POST = apiRoute<Params>("verifiers:manage", async ({ req, params }) => {
  const name = checkName(params.name);
  const raw = await readVerifierBody(req);
  if (!isPlainObject(raw)) throw new ApiError("invalid_request", 'send {"operation_id": "…"} (and optionally a draft "definition")');
  const parsed = { data: validated(bodySchema, raw) };
  let definition;
  let version: number | null = null;
  if (parsed.data.definition !== undefined) {
    definition = parseDefinition(parsed.data.definition);
    if (definition.name !== name) throw new ApiError("invalid_request", `definition.name is ${JSON.stringify(definition.name)}, but this is the dry run of ${JSON.stringify(name)}`);
  } else {
    const latest = await latestVerifier(name);
    if (!latest) throw new ApiError("not_found", `no verifier named ${JSON.stringify(name)}`);
    definition = latest.definition;
    version = latest.version;
  }
  const result = await dryRun(definition, version, parsed.data.operation_id);
  return json({ ...result, warnings: await fingerprintRuleDryRunWarnings(definition) });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
