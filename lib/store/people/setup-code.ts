import "server-only";
import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { placeholder } from "../db/sql";

/**
 * The one-time setup code. While no user exists, whoever reaches /setup first becomes the admin:
 * harmless on loopback, not on an address others can reach. So when the server listens on a
 * non-loopback address with no user yet, it makes a code (one row, shared by every instance on
 * the database), prints it, and /setup asks for it; creating the first admin deletes it.
 */
export const SETUP_CODE_ROW = 1;
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"; // no 0/O, 1/I/L
const GROUPS = 3;
const GROUP_LENGTH = 4;

function newCode(): string {
  const groups = Array.from({ length: GROUPS }, () => Array.from({ length: GROUP_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join(""));
  return groups.join("-");
}

/** Case, spaces and dashes do not matter to a person copying it. */
function canonical(code: string): Buffer {
  return createHash("sha256").update(code.toUpperCase().replace(/[^A-Z0-9]/g, ""), "utf8").digest();
}

export function setupCodeMatches(expected: string, given: string): boolean {
  return timingSafeEqual(canonical(expected), canonical(given));
}

/**
 * At server start: the code to print, or null. With users there is nothing to set up (a stale
 * code is deleted); on loopback none is needed (likewise); otherwise the existing code, or a new
 * one (INSERT … ON CONFLICT DO NOTHING, so instances starting together agree on one).
 */
export async function setupCodeAtStart(needsCode: boolean): Promise<string | null> {
  return writeTransaction(async (tx) => {
    if (!needsCode || (await tx.user.count()) > 0) {
      await tx.setupCode.deleteMany({});
      return null;
    }
    await tx.$executeRawUnsafe(
      `INSERT INTO setup_code (id, code, created_at) VALUES (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)}) ON CONFLICT (id) DO NOTHING`,
      SETUP_CODE_ROW,
      newCode(),
      new Date().toISOString(),
    );
    return (await tx.setupCode.findUniqueOrThrow({ where: { id: SETUP_CODE_ROW } })).code;
  });
}

/** Whether /setup must ask for the code. */
export async function setupCodeRequired(): Promise<boolean> {
  const db = await reader();
  return (await db.setupCode.count()) > 0;
}
