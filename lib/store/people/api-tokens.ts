import "server-only";
import { randomUUID } from "node:crypto";
import { isScope, SCOPES, scopesAllowedFor, type Scope } from "@/lib/domain/permissions";
import { generateToken, hashToken, looksLikeToken } from "@/lib/crypto/tokens";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { isStorageFull } from "../db/unavailable";
import { recordSecurityEvent } from "../chain/security-events";
import { lockInstanceChain } from "../chain/instance-chain";
import { forgetToken, forgetTokens, rememberedToken, rememberToken, type TokenPrincipal } from "./token-cache";
import { normalizeEmail } from "./users";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";
import { standingWith } from "./projects";

/**
 * Creates a token for a user in one project (the default project unless said), whose data it
 * then reads and writes. Refuses scopes above the owner's role in that project, and a project
 * the owner has no role in. Returns the token once.
 */
export async function createApiToken(input: {
  email: string;
  name: string;
  scopes: string[];
  /** The project's id. */
  project?: string;
  actor: string | null;
  source?: string | null;
}): Promise<{ token: string; id: string; prefix: string; last4: string; scopes: Scope[]; project: string }> {
  const name = input.name.trim();
  if (!name || name.length > 100) throw new StoreError("invalid_input", "a token needs a name of 1–100 characters");
  const unknown = input.scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new StoreError("invalid_input", `unknown scope ${unknown.join(", ")}; scopes are ${SCOPES.join(", ")}`);
  const scopes = [...new Set(input.scopes)] as Scope[];
  if (!scopes.length) throw new StoreError("invalid_input", "a token needs at least one scope");
  const email = normalizeEmail(input.email);
  const projectId = input.project ?? DEFAULT_PROJECT;
  return writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    const user = await tx.user.findUnique({ where: { email } });
    if (!user) throw new StoreError("not_found", `no user with the email ${email}`);
    if (user.disabled) throw new StoreError("forbidden", `${email} is disabled`);
    const project = await tx.project.findUnique({ where: { id: projectId } });
    const { role } = await standingWith(tx, user.id, projectId);
    if (!project || !project.readyAt || !role) throw new StoreError("not_found", `project: ${email} is in no such project`);
    const allowed = scopesAllowedFor(role);
    const above = scopes.filter((s) => !allowed.includes(s));
    if (above.length) {
      throw new StoreError("forbidden", `a ${role}'s token cannot carry the scope ${above.join(", ")} (allowed: ${allowed.join(", ")})`);
    }
    const t = generateToken();
    const id = randomUUID();
    await tx.apiToken.create({
      data: { id, userId: user.id, name, prefix: t.prefix, last4: t.last4, tokenHash: t.hash, scopes: scopes.join(","), projectId, createdAt: new Date() },
    });
    await recordSecurityEvent(tx, input.actor, {
      type: "token.created",
      token_id: id,
      owner: email,
      name,
      scopes,
      ...(projectId !== DEFAULT_PROJECT ? { project: project.slug } : {}),
      source: input.source ?? null,
    });
    return { token: t.token, id, prefix: t.prefix, last4: t.last4, scopes, project: project.slug };
  });
}

/** Last-used times are written at most once a minute per token: reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The principal behind a bearer token, or null when it is unknown, revoked, its owner is
 * disabled, or the owner has no role left in the token's project. Its role is the owner's in
 * that project now (a demoted owner's review token stops reviewing).
 */
export async function authenticateToken(token: string): Promise<TokenPrincipal | null> {
  if (!looksLikeToken(token)) return null;
  const hash = hashToken(token);
  const remembered = rememberedToken(hash);
  if (remembered) return remembered;
  const db = await reader();
  const row = await db.apiToken.findUnique({ where: { tokenHash: hash }, include: { user: true } });
  const project = row ? await db.project.findUnique({ where: { id: row.projectId } }) : null;
  const { role, instanceAdmin } = row ? await standingWith(db, row.userId, row.projectId) : { role: null, instanceAdmin: false };
  if (!row || row.revokedAt || row.user.disabled || !project?.readyAt || !role) {
    forgetToken(hash);
    return null;
  }
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    try {
      await writeTransaction((tx) => tx.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }));
    } catch (e) {
      // "Last used" is bookkeeping: a full disk refuses it, not the request (reads go on; a write answers 507 itself).
      if (!isStorageFull(e)) throw e;
    }
  }
  const principal: TokenPrincipal = {
    kind: "token",
    tokenId: row.id,
    tokenName: row.name,
    userId: row.userId,
    email: row.user.email,
    role,
    instanceAdmin,
    project: { id: project.id, slug: project.slug, name: project.name },
    scopes: row.scopes.split(",").filter(isScope),
  };
  rememberToken(hash, principal);
  return principal;
}

export type TokenSummary = { id: string; name: string; prefix: string; last4: string; scopes: string[]; createdAt: Date; lastUsedAt: Date | null };

/** A user's live tokens in one project, newest first (never the token itself: it is not stored). */
export async function listTokens(userId: string, projectId: string = DEFAULT_PROJECT): Promise<TokenSummary[]> {
  const db = await reader();
  const rows = await db.apiToken.findMany({ where: { userId, projectId, revokedAt: null }, orderBy: { createdAt: "desc" } });
  return rows.map((r) => ({ id: r.id, name: r.name, prefix: r.prefix, last4: r.last4, scopes: r.scopes.split(","), createdAt: r.createdAt, lastUsedAt: r.lastUsedAt }));
}

export type AnyTokenSummary = TokenSummary & { owner: string };

/** Every user's live tokens in one project, newest first, for its admins: names, prefixes and use, never a secret. */
export async function listAllTokens(projectId: string = DEFAULT_PROJECT, limit = 500): Promise<AnyTokenSummary[]> {
  const db = await reader();
  const rows = await db.apiToken.findMany({ where: { projectId, revokedAt: null }, orderBy: { createdAt: "desc" }, take: limit, include: { user: { select: { email: true } } } });
  return rows.map((r) => ({ id: r.id, name: r.name, prefix: r.prefix, last4: r.last4, scopes: r.scopes.split(","), createdAt: r.createdAt, lastUsedAt: r.lastUsedAt, owner: r.user.email }));
}

/**
 * Revokes a token of one project: one of the owner's (`ownerId`; another user's token is "not
 * found" to them), or any user's (`ownerId: null`, for the project's admins only: the caller
 * checks). A token of another project is "not found". Returns whose it was.
 */
export async function revokeToken(input: { id: string; ownerId: string | null; projectId?: string; actor: string; source?: string | null }): Promise<{ owner: string; name: string }> {
  const projectId = input.projectId ?? DEFAULT_PROJECT;
  const result = await writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    const token = await tx.apiToken.findUnique({ where: { id: input.id }, include: { user: true } });
    if (!token || token.projectId !== projectId || (input.ownerId !== null && token.userId !== input.ownerId) || token.revokedAt) throw new StoreError("not_found", "no such token");
    await tx.apiToken.update({ where: { id: token.id }, data: { revokedAt: new Date() } });
    await recordSecurityEvent(tx, input.actor, { type: "token.revoked", token_id: token.id, owner: token.user.email, source: input.source ?? null });
    return { owner: token.user.email, name: token.name };
  });
  forgetTokens();
  return result;
}
