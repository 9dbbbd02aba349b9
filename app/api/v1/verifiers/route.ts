import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { fingerprintRuleWarnings } from "@/lib/api/verifier-fingerprints";
import { parseDefinition, readVerifierBody, versionJson } from "@/lib/api/verifiers";
import { listVerifiers, saveVerifierVersion } from "@/lib/store/settings/verifiers";

/** Every verifier, its latest version (admins: VERIFIERS.md). */
export const GET = apiRoute("verifiers:manage", async () => {
  const list = await listVerifiers();
  return json({ items: list.map((v) => ({ ...versionJson(v), versions: v.versions })) });
});

/** A new verifier, or a new version of one (the same name): 201; identical to the latest version: 200, nothing stored. */
export const POST = apiRoute("verifiers:manage", async ({ req, principal }) => {
  const definition = parseDefinition(await readVerifierBody(req), "request");
  // A match rule without a fingerprint pointer: refused, or a warning when it cannot be known (issue 54).
  const warnings = await fingerprintRuleWarnings(definition);
  const { version, created } = await saveVerifierVersion(definition, principal.email);
  return json({ verifier: versionJson(version), created, warnings }, created ? 201 : 200);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
