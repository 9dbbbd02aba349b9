import "server-only";
import { openText, sealText } from "@/lib/domain/sealed";
import { serverSecret } from "@/lib/crypto/server-secret";
import { allowlistedSecrets, grantedTo, parseSecretAllowlist, storedSecretNames } from "@/lib/domain/verifier-secrets";
import { processEnv, TemplateError, type SecretSource } from "@/lib/domain/verifier-template";
import { sealedVerifierSecrets } from "@/lib/store/settings/verifier-secrets";
import { currentProjectId, currentProjectKey } from "@/lib/store/db/project-context";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";

/**
 * Where a verifier's secrets come from: `{env.NAME}` from the server's environment, only the
 * variables RECONCILE_VERIFIER_ENV lists (read at each check: a name taken off the list is never
 * read again); `{secret.NAME}` from the stored secrets, opened just before the request is sent.
 */

const PURPOSE = "verifier secrets v1";

/**
 * Each project's secrets are sealed under a key of their own (the project in the key's purpose),
 * so a value copied into another project's database opens nowhere there. The default project's
 * keep the purpose they were sealed under before projects.
 */
const purpose = () => {
  const project = currentProjectId();
  return project === DEFAULT_PROJECT ? PURPOSE : `${PURPOSE} project ${project}`;
};

/** The variables RECONCILE_VERIFIER_ENV grants to the current project's verifiers, read now. */
export function allowedSecretNames(): string[] {
  return grantedTo(parseSecretAllowlist(process.env.RECONCILE_VERIFIER_ENV).grants, currentProjectKey());
}

export function sealVerifierSecret(value: string): string {
  return sealText(value, serverSecret(), purpose());
}

/** The secrets one definition's request may be filled with (one read of the stored ones it names, if any). */
export async function verifierSecretsFor(def: { request: { url: string; headers?: Record<string, string>; body?: string } }): Promise<SecretSource> {
  const env = allowlistedSecrets(allowedSecretNames(), processEnv, currentProjectKey());
  const sealed = await sealedVerifierSecrets(storedSecretNames(def));
  return (name, kind = "env") => {
    if (kind !== "secret") return env(name, kind);
    const s = sealed.get(name);
    if (s === undefined) return undefined;
    try {
      return openText(s, serverSecret(), purpose());
    } catch {
      // Sealed under another AUTH_SECRET (or damaged): a check that cannot be filled in, saying what to do.
      throw new TemplateError(`the stored secret ${name} cannot be opened: it was sealed under another AUTH_SECRET; an admin sets it again under Verifiers, Secrets ({secret.${name}})`);
    }
  };
}
