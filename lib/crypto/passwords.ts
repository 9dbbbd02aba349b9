import { hash, verify } from "@node-rs/argon2";

/** argon2id at OWASP's minimum: m = 19 MiB, t = 2, p = 1. */
// algorithm 2 = Argon2id (the package exports it as a const enum, which isolatedModules forbids).
const OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export { MIN_PASSWORD_LENGTH } from "@/lib/domain/password-policy";

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
