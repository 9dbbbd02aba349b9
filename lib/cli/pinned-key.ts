import { existsSync, readFileSync } from "node:fs";
import { publicKeyFromText } from "@/lib/domain/checkpoint";

/** A --key (or RECONCILE_CHECKPOINT_PUBLIC_KEY) that names no usable key: a usage error of the command line's. */
export class KeyUsageError extends Error {}

/**
 * The key checkpoints must be signed with: --key (a file: PEM public key, or the `ed25519:…`
 * line the audit page shows), else RECONCILE_CHECKPOINT_PUBLIC_KEY (that text itself, or a path
 * to such a file). Undefined when neither is given.
 */
export function pinnedKey(option: string | undefined): { key: string; from: string } | undefined {
  const env = process.env.RECONCILE_CHECKPOINT_PUBLIC_KEY?.trim();
  const [from, text] = option
    ? [`--key ${option}`, readKeyFile(option, "--key")]
    : env
      ? ["RECONCILE_CHECKPOINT_PUBLIC_KEY", /^(-----BEGIN|ed25519:)/.test(env) ? env : readKeyFile(env, "RECONCILE_CHECKPOINT_PUBLIC_KEY")]
      : [null, null];
  if (from === null || text === null) return undefined;
  try {
    return { key: publicKeyFromText(text), from };
  } catch (e) {
    throw new KeyUsageError(`${from}: not a usable public key: ${e instanceof Error ? e.message : e}`);
  }
}

function readKeyFile(file: string, what: string): string {
  if (!existsSync(file)) throw new KeyUsageError(`${what}: no file ${file} (give a PEM public key, or the ed25519:… line the audit page shows)`);
  return readFileSync(file, "utf8");
}
