import "server-only";
import { writeTransaction, reader } from "../db/db";
import { recordSecurityEvent } from "../chain/security-events";

/**
 * Verifier secrets (`{secret.NAME}`): stored sealed (the caller seals; lib/domain/sealed.ts), so
 * that whoever writes verifiers can send a credential without the server's operator putting it in
 * the environment. A set replaces the value; every set and delete is a chained security event
 * naming the secret, never its value.
 */

export type VerifierSecretInfo = { name: string; created_at: string; updated_at: string; updated_by: string };

const info = (r: { name: string; createdAt: string; updatedAt: string; updatedBy: string }): VerifierSecretInfo => ({
  name: r.name,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
  updated_by: r.updatedBy,
});

export async function setVerifierSecret(input: { name: string; sealed: string; by: string }): Promise<{ secret: VerifierSecretInfo; created: boolean }> {
  return writeTransaction(async (tx) => {
    const at = new Date().toISOString();
    const existing = await tx.verifierSecret.findUnique({ where: { name: input.name }, select: { name: true } });
    await recordSecurityEvent(tx, input.by, { type: "verifier.secret_set", name: input.name, replaced: Boolean(existing) });
    const row = await tx.verifierSecret.upsert({
      where: { name: input.name },
      create: { name: input.name, sealed: input.sealed, createdAt: at, updatedAt: at, updatedBy: input.by },
      update: { sealed: input.sealed, updatedAt: at, updatedBy: input.by },
    });
    return { secret: info(row), created: !existing };
  });
}

/** Removes a secret: false when there was none (nothing recorded). */
export async function deleteVerifierSecret(name: string, by: string): Promise<boolean> {
  return writeTransaction(async (tx) => {
    const { count } = await tx.verifierSecret.deleteMany({ where: { name } });
    if (count) await recordSecurityEvent(tx, by, { type: "verifier.secret_deleted", name });
    return count > 0;
  });
}

/** Every stored secret's name and history, never its value. */
export async function listVerifierSecrets(): Promise<VerifierSecretInfo[]> {
  const rows = await (await reader()).verifierSecret.findMany({ orderBy: { name: "asc" }, select: { name: true, createdAt: true, updatedAt: true, updatedBy: true } });
  return rows.map(info);
}

/** The sealed values of the named secrets that exist (a check opens them just before it sends). */
export async function sealedVerifierSecrets(names: readonly string[]): Promise<Map<string, string>> {
  if (!names.length) return new Map();
  const rows = await (await reader()).verifierSecret.findMany({ where: { name: { in: [...names] } }, select: { name: true, sealed: true } });
  return new Map(rows.map((r) => [r.name, r.sealed]));
}
