import "server-only";
import { secretNameProblem, storedSecretNames, verifierSecretBodySchema } from "@/lib/domain/verifier-secrets";
import { isPlainObject } from "@/lib/domain/json";
import { listVerifiers } from "@/lib/store/settings/verifiers";
import { listVerifierSecrets, type VerifierSecretInfo } from "@/lib/store/settings/verifier-secrets";
import { readJsonBody } from "./body";
import { ApiError, validated } from "./errors";

/** A secret's value is at most 8,192 characters: 64 KiB bounds any body that carries one. */
const MAX_BODY_BYTES = 64 * 1024;

/** The name in the path: a name no secret can have is refused (422 on a write, 404 on a read or delete). */
export function secretName(name: string, onBad: "invalid_request" | "not_found"): string {
  const problem = secretNameProblem(name);
  if (problem) throw new ApiError(onBad, onBad === "not_found" ? `no secret named ${JSON.stringify(name.slice(0, 100))}` : `${JSON.stringify(name.slice(0, 100))}: ${problem}`);
  return name;
}

export async function readSecretValue(req: Request): Promise<string> {
  const raw = await readJsonBody(req, MAX_BODY_BYTES);
  if (!isPlainObject(raw)) throw new ApiError("invalid_request", 'send {"value": "…"}');
  return validated(verifierSecretBodySchema, raw).value;
}

/** Each secret with the verifiers whose latest version sends it, and the names verifiers send that are not stored. */
export async function secretsWithUse(): Promise<{ items: (VerifierSecretInfo & { used_by: string[] })[]; missing: { name: string; used_by: string[] }[] }> {
  const [secrets, verifiers] = await Promise.all([listVerifierSecrets(), listVerifiers()]);
  const users = new Map<string, string[]>();
  for (const v of verifiers) {
    if (!v.enabled) continue;
    for (const name of storedSecretNames(v.definition)) users.set(name, [...(users.get(name) ?? []), v.name]);
  }
  const stored = new Set(secrets.map((s) => s.name));
  return {
    items: secrets.map((s) => ({ ...s, used_by: users.get(s.name) ?? [] })),
    missing: [...users].filter(([name]) => !stored.has(name)).map(([name, used_by]) => ({ name, used_by })),
  };
}
