import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { readSecretValue, secretName } from "@/lib/api/verifier-secrets";
import { deleteVerifierSecret, setVerifierSecret } from "@/lib/store/settings/verifier-secrets";
import { sealVerifierSecret } from "@/lib/verifiers/secrets";

type Params = { name: string };

/** Stores the secret (201), or replaces its value (200). The value is sealed and never answered. */
export const PUT = apiRoute<Params>("verifiers:manage", async ({ req, params, principal }) => {
  const name = secretName(params.name, "invalid_request");
  const value = await readSecretValue(req);
  const { secret, created } = await setVerifierSecret({ name, sealed: sealVerifierSecret(value), by: principal.email });
  return json({ secret, created }, created ? 201 : 200);
});

/** Removes it: verifiers that send it then record an unavailable read saying so. */
export const DELETE = apiRoute<Params>("verifiers:manage", async ({ params, principal }) => {
  const name = secretName(params.name, "not_found");
  if (!(await deleteVerifierSecret(name, principal.email))) throw new ApiError("not_found", `no secret named ${JSON.stringify(name)}`);
  return json({ deleted: name });
});

export const { GET, POST, PATCH, OPTIONS } = otherMethods("PUT", "DELETE");
