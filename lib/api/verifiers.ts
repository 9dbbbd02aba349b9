import "server-only";
import { checkJsonShape, isPlainObject } from "@/lib/domain/json";
import { verifierDefinitionSchema, verifierNameSchema, type VerifierDefinition, type VerifierVersion } from "@/lib/domain/verifier";
import { secretAllowlistProblems } from "@/lib/domain/verifier-secrets";
import { pathName } from "@/lib/domain/refusal";
import { allowedSecretNames } from "@/lib/verifiers/secrets";
import { currentProjectKey } from "@/lib/store/db/project-context";
import { readJsonBody } from "./body";
import { ApiError, invalid } from "./errors";

/** A verifier definition is small: 256 KiB is generous, and bounds every hostile shape. */
export const MAX_VERIFIER_BYTES = 256 * 1024;

/** Nested deeper than this, a definition is refused before any schema walks it. */
const MAX_DEFINITION_DEPTH = 16;
const MAX_DEFINITION_CONTAINERS = 2_000;

/** A definition from a parsed body: its shape first (cheap, iterative), then the schema; 422 naming each problem. */
export function parseDefinition(raw: unknown, path = "definition"): VerifierDefinition {
  const shape = checkJsonShape(raw, MAX_DEFINITION_DEPTH, MAX_DEFINITION_CONTAINERS);
  if (shape) throw new ApiError("invalid_request", `${path}: ${shape.path}: ${shape.message}`, [shape]);
  if (!isPlainObject(raw)) throw new ApiError("invalid_request", `${path} must be a JSON object`);
  const parsed = verifierDefinitionSchema.safeParse(raw);
  if (!parsed.success) throw invalid("invalid_request", parsed.error, { input: raw, schema: verifierDefinitionSchema, root: path });
  // Secrets: only the variables the instance's operator grants to this project (verifier-secrets.ts).
  const secrets = secretAllowlistProblems(parsed.data, allowedSecretNames(), currentProjectKey());
  if (secrets.length) {
    const details = secrets.map((p) => ({ path: pathName(p.path), code: "secret_not_allowed", message: p.message }));
    throw new ApiError("invalid_request", details.map((d) => `${d.path}: ${d.message}`).join("; "), details);
  }
  return parsed.data;
}

export async function readVerifierBody(req: Request): Promise<unknown> {
  return readJsonBody(req, MAX_VERIFIER_BYTES);
}

export function checkName(name: string): string {
  if (!verifierNameSchema.safeParse(name).success) throw new ApiError("not_found", `no verifier named ${JSON.stringify(name.slice(0, 100))}`);
  return name;
}

/** A version as the API answers it. */
export function versionJson(v: VerifierVersion) {
  return { name: v.name, version: v.version, tool: v.tool, enabled: v.enabled, definition: v.definition, created_at: v.created_at, created_by: v.created_by, seq: v.seq };
}
