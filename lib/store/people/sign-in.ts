import "server-only";
import { identifierDigest, MAX_IDENTIFIER_LENGTH, normalizeIdentifier } from "@/lib/crypto/identifier";
import { verifyPassword } from "@/lib/crypto/passwords";
import type { Tx } from "../db/database";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { recordSecurityEvent } from "../chain/security-events";
import { lockInstanceChain } from "../chain/instance-chain";
import { placeholder } from "../db/sql";
import { recordSignInFailure, signInThrottle, type ThrottleWindow } from "./throttle";

export type SignInResult =
  | { ok: true; user: { id: string; email: string; sessionVersion: number } }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; minutes: number };

/** A hash to verify against when the account does not exist, so timing does not tell. */
const DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$8s0a0cz1wGm1lkF5pR6Sx3dHf0Ba3PpXr3pXq1GZf9c";

/**
 * Checks email + password with throttling: an account (or address) over its failure limit is
 * refused before the password is even looked at, so the right password does not help either.
 *
 * What reaches the audit chain, so that nobody without an account can make it grow without
 * bound: every failure below the limits (bounded by them), and once a key is throttled exactly
 * one `signin.throttled` record per key and window (signin_throttle_notices), however many
 * attempts follow. An identifier that names no user — often a password typed into the email
 * field — is kept only as its digest, in the chain and in the throttle keys alike; one longer than
 * an email can be (254 characters) is refused without a lookup.
 */
export async function signInWithPassword(identifierInput: string, password: string, address: string | null): Promise<SignInResult> {
  const identifier = normalizeIdentifier(identifierInput);
  const digest = identifierDigest(identifier);
  const tooLong = identifier.length > MAX_IDENTIFIER_LENGTH;
  const db = await reader();
  const user = tooLong ? null : await db.user.findUnique({ where: { email: identifier } });
  // The name this attempt is recorded under: the account's email, or the digest of what was typed.
  const who = user?.email ?? digest;

  const throttle = await signInThrottle(digest, address);
  if (throttle.minutes) {
    await recordThrottled(throttle.windows, who, address);
    return { ok: false, reason: "throttled", minutes: throttle.minutes };
  }
  const valid = await verifyPassword(user?.passwordHash ?? DUMMY_HASH, password);
  if (!user || !valid || user.disabled) {
    await recordSignInFailure(digest, address);
    const reason = tooLong ? "identifier too long" : !user ? "unknown account" : user.disabled ? "account disabled" : "wrong password";
    await writeTransaction((tx) => recordSecurityEvent(tx, who, { type: "signin.failed", email: who, reason, source: address }));
    return { ok: false, reason: "invalid" };
  }
  await writeTransaction((tx) =>
    recordSecurityEvent(tx, user.email, { type: "signin.succeeded", email: user.email, method: "password", source: address }),
  );
  return { ok: true, user: { id: user.id, email: user.email, sessionVersion: user.sessionVersion } };
}

/**
 * One `signin.throttled` record per key and window: the transaction that inserts the window's
 * notice row appends the record; any other (on this instance or another, now or later in the
 * window) finds the row there and appends nothing. On PostgreSQL a concurrent insert of the same
 * row waits for the first to commit and then does nothing.
 */
async function recordThrottled(windows: ThrottleWindow[], who: string, address: string | null): Promise<void> {
  // Most throttled attempts come after the notice exists: a read answers them, no write at all.
  const db = await reader();
  const open: ThrottleWindow[] = [];
  for (const w of windows) {
    const seen = await db.signInThrottleNotice.findUnique({ where: { key_windowEnd: { key: w.storeKey, windowEnd: w.until.toISOString() } } });
    if (!seen) open.push(w);
  }
  if (!open.length) return;
  const now = new Date();
  await writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    for (const w of open) {
      if (!(await claimNotice(tx, w.storeKey, w.until.toISOString(), now))) continue;
      const key = w.scope === "account" ? who : w.key;
      await recordSecurityEvent(tx, w.scope === "account" ? who : null, {
        type: "signin.throttled",
        scope: w.scope,
        key,
        until: w.until.toISOString(),
        source: address,
      });
    }
    // Notices of windows that ended a day ago protect nothing any more.
    await tx.$executeRawUnsafe(`DELETE FROM signin_throttle_notices WHERE window_end < ${placeholder(1)}`, new Date(now.getTime() - 86_400_000).toISOString());
  });
}

async function claimNotice(tx: Tx, storeKey: string, windowEnd: string, now: Date): Promise<boolean> {
  const inserted = await tx.$executeRawUnsafe(
    `INSERT INTO signin_throttle_notices (key, window_end, created_at) VALUES (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)}) ON CONFLICT (key, window_end) DO NOTHING`,
    storeKey,
    windowEnd,
    now.toISOString(),
  );
  return inserted === 1;
}
