import "server-only";
import { randomUUID } from "node:crypto";
import { ApiError } from "@/lib/api/errors";
import { isRole, isScope, scopesAllowedFor, type Principal, type Scope } from "@/lib/auth/permissions";
import { generateToken, hashToken, looksLikeToken } from "@/lib/auth/tokens";
import { reader, writeTransaction } from "./db";
import { recordSecurityEvent } from "./security-events";
import { normalizeEmail } from "./users";

/** Creates a token for a user. Refuses scopes above the owner's role. Returns the token once. */
export async function createApiToken(input: {
  email: string;
  name: string;
  scopes: string[];
  actor: string | null;
  source?: string | null;
}): Promise<{ token: string; id: string; prefix: string; last4: string; scopes: Scope[] }> {
  const name = input.name.trim();
  if (!name || name.length > 100) throw new ApiError("invalid_request", "a token needs a name of 1–100 characters");
  const unknown = input.scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new ApiError("invalid_request", `unknown scope ${unknown.join(", ")}; scopes are ingest, read, export, review`);
  const scopes = [...new Set(input.scopes)] as Scope[];
  if (!scopes.length) throw new ApiError("invalid_request", "a token needs at least one scope");
  const email = normalizeEmail(input.email);
  return writeTransaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { email } });
    if (!user) throw new ApiError("not_found", `no user with the email ${email}`);
    if (user.disabled) throw new ApiError("forbidden", `${email} is disabled`);
    if (!isRole(user.role)) throw new ApiError("internal", "user has an unknown role");
    const allowed = scopesAllowedFor(user.role);
    const above = scopes.filter((s) => !allowed.includes(s));
    if (above.length) {
      throw new ApiError("forbidden", `a ${user.role}'s token cannot carry the scope ${above.join(", ")} (allowed: ${allowed.join(", ")})`);
    }
    const t = generateToken();
    const id = randomUUID();
    await tx.apiToken.create({
      data: { id, userId: user.id, name, prefix: t.prefix, last4: t.last4, tokenHash: t.hash, scopes: scopes.join(","), createdAt: new Date() },
    });
    await recordSecurityEvent(tx, input.actor, { type: "token.created", token_id: id, owner: email, name, scopes, source: input.source ?? null });
    return { token: t.token, id, prefix: t.prefix, last4: t.last4, scopes };
  });
}

/** Last-used times are written at most once a minute per token: reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The principal behind a bearer token, or null when it is unknown, revoked, or its owner is
 * disabled. Checked against the database on every request.
 */
export async function authenticateToken(token: string): Promise<Extract<Principal, { kind: "token" }> | null> {
  if (!looksLikeToken(token)) return null;
  const db = await reader();
  const row = await db.apiToken.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!row || row.revokedAt || row.user.disabled || !isRole(row.user.role)) return null;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await writeTransaction((tx) => tx.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }));
  }
  return {
    kind: "token",
    tokenId: row.id,
    userId: row.userId,
    email: row.user.email,
    role: row.user.role,
    scopes: row.scopes.split(",").filter(isScope),
  };
}
