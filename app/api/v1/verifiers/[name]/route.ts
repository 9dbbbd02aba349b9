import { ApiError } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { checkName, versionJson } from "@/lib/api/verifiers";
import { setVerifierEnabled, verifierVersions } from "@/lib/store/settings/verifiers";

type Params = { name: string };

/** The verifier's latest version and every version, newest first. */
export const GET = apiRoute<Params>("verifiers:manage", async ({ params }) => {
  const versions = await verifierVersions(checkName(params.name));
  if (!versions.length) throw new ApiError("not_found", `no verifier named ${JSON.stringify(params.name)}`);
  return json({ verifier: versionJson(versions[0]), versions: versions.map(versionJson) });
});

/** Disables it: a new version (nothing is deleted; checks already scheduled still run). */
export const DELETE = apiRoute<Params>("verifiers:manage", async ({ params, principal }) => {
  const { version, created } = await setVerifierEnabled(checkName(params.name), false, principal.email);
  return json({ verifier: versionJson(version), created });
});

export const { POST, PUT, PATCH, OPTIONS } = otherMethods("GET", "DELETE");
