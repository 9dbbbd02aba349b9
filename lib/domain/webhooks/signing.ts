import { randomBytes } from "node:crypto";
import { openText, sealText } from "../sealed";
import { Webhook } from "standardwebhooks";
import { DEFAULT_PROJECT } from "../projects";

/**
 * Standard Webhooks signing through the maintained `standardwebhooks` package (never a
 * hand-written HMAC), and the storage of endpoint secrets.
 */

/** A new endpoint secret: `whsec_` and 32 random bytes in base64 (what the package expects). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The headers of one attempt. `id` is the message's id, the same on every retry and redelivery.
 * Several secrets (while one rotates: the new one first, then the one it replaced) give several
 * signatures, space-separated, as Standard Webhooks specifies: a receiver verifies with either.
 */
export function signedHeaders(secrets: string | readonly string[], id: string, at: Date, body: string): Record<string, string> {
  const all = typeof secrets === "string" ? [secrets] : secrets;
  if (!all.length) throw new Error("a webhook is signed with at least one secret");
  const signature = all.map((secret) => new Webhook(secret).sign(id, at, body)).join(" ");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signature,
  };
}

/**
 * The server must sign, so it must keep the secret itself (an HMAC key cannot be stored as a
 * hash): sealed as lib/domain/sealed.ts says, under the webhooks' own derived key.
 */
const PURPOSE = "webhook endpoint secrets v1";

/**
 * Each project's endpoint secrets are sealed under a key of its own (issue 47), as its verifier
 * secrets are, so a sealed value copied into another project's database opens nowhere there. The
 * default project's keep the purpose they were always sealed under.
 */
const purposeOf = (project: string) => (project === DEFAULT_PROJECT ? PURPOSE : `${PURPOSE} project ${project}`);

export function sealSecret(secret: string, serverSecret: string, project: string = DEFAULT_PROJECT): string {
  return sealText(secret, serverSecret, purposeOf(project));
}

/**
 * Opens a project's endpoint secret: under the project's own key, or, for one sealed before
 * secrets were sealed per project, under the one key all projects shared (rotating the secret
 * seals the new one under the project's key).
 */
export function openSecret(sealed: string, serverSecret: string, project: string = DEFAULT_PROJECT): string {
  try {
    return openText(sealed, serverSecret, purposeOf(project));
  } catch (e) {
    if (project === DEFAULT_PROJECT) throw e;
    return openText(sealed, serverSecret, PURPOSE);
  }
}

/** What a list may show of a secret: its first characters, enough to tell two apart. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, 10)}…`;
}
