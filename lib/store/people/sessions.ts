import "server-only";
import { randomUUID } from "node:crypto";
import { identifierDigest } from "@/lib/crypto/identifier";
import { isRole } from "@/lib/domain/permissions";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";
import { lockInstanceChain } from "../chain/instance-chain";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { recordSecurityEvent } from "../chain/security-events";
import { normalizeEmail } from "./users";

/**
 * Signing out ends the session everywhere, not just in this browser: the user's session version
 * goes up, and every request compares the version its session carries with the database's
 * (lib/auth/session.ts), on every instance. Only a session that was still valid counts: an old
 * cookie replayed at the sign-out endpoint changes nothing and records nothing.
 */
export async function recordSignOut(userId: string, sessionVersion: number, source: string | null = null): Promise<void> {
  await writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    const ended = await tx.user.updateMany({ where: { id: userId, sessionVersion }, data: { sessionVersion: { increment: 1 } } });
    if (ended.count !== 1) return;
    const user = await tx.user.findUniqueOrThrow({ where: { id: userId }, select: { email: true } });
    await recordSecurityEvent(tx, user.email, { type: "signout", email: user.email, source });
  });
}

export type SsoClaims = { issuer: string; subject: string; email: string | null; emailVerified: unknown };
export type SsoUser = { id: string; email: string; sessionVersion: number };
export type SsoRefusal = "unverified" | "domain" | "other_identity" | "disabled";

/** AUTH_OIDC_ALLOWED_DOMAINS: a comma list of email domains (`example.com`, or `@example.com`); unset: any. */
export function allowedDomains(setting = process.env.AUTH_OIDC_ALLOWED_DOMAINS): string[] | null {
  const list = (setting ?? "")
    .split(",")
    .map((d) => d.trim().toLowerCase().replace(/^@/, ""))
    .filter(Boolean);
  return list.length ? list : null;
}

function domainAllowed(email: string, allowed: string[] | null): boolean {
  if (!allowed) return true;
  return allowed.includes(email.slice(email.lastIndexOf("@") + 1));
}

/**
 * The local user for a single sign-on identity.
 *
 * - The provider must say the email is verified (`email_verified: true`), and its domain must be
 *   one of AUTH_OIDC_ALLOWED_DOMAINS when that is set; both on every sign-in.
 * - An identity already linked (issuer + subject) is that user, whatever email the provider now
 *   sends: changing one's email at the provider cannot take over another account.
 * - Otherwise the identity is linked to the user with its email (created with
 *   AUTH_OIDC_DEFAULT_ROLE, viewer unless set, when there is none) — unless that user is already
 *   linked to another subject of the same issuer: then it is refused.
 *
 * Runs under the chain lock, so two first sign-ins of one identity cannot link it twice. Every
 * outcome is a security event.
 */
export async function signInWithSso(claims: SsoClaims, source: string | null = null): Promise<{ ok: true; user: SsoUser } | { ok: false; reason: SsoRefusal }> {
  const email = claims.email ? normalizeEmail(claims.email) : "";
  const defaultRole = isRole(process.env.AUTH_OIDC_DEFAULT_ROLE) ? process.env.AUTH_OIDC_DEFAULT_ROLE : "viewer";
  return writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    const refuse = async (reason: SsoRefusal, detail: string, account?: string) => {
      // As for password sign-ins: an email that names no user is kept as its digest only.
      const named = account ?? (email ? (await tx.user.findUnique({ where: { email }, select: { email: true } }))?.email : null);
      const who = named ?? (email ? identifierDigest(email) : identifierDigest(`${claims.issuer}#${claims.subject}`));
      await recordSecurityEvent(tx, who, { type: "signin.failed", email: who, reason: detail, method: "oidc", source });
      return { ok: false as const, reason };
    };
    if (claims.emailVerified !== true || !email) return refuse("unverified", "email not verified by the identity provider");
    if (!domainAllowed(email, allowedDomains())) return refuse("domain", "email domain not allowed");

    const linked = await tx.oidcIdentity.findUnique({ where: { issuer_subject: { issuer: claims.issuer, subject: claims.subject } }, include: { user: true } });
    let user = linked?.user ?? null;
    if (!user) {
      user = await tx.user.findUnique({ where: { email } });
      if (user && (await tx.oidcIdentity.findUnique({ where: { issuer_userId: { issuer: claims.issuer, userId: user.id } } }))) {
        return refuse("other_identity", "account linked to another identity of this provider");
      }
      const now = new Date();
      if (!user) {
        user = await tx.user.create({ data: { id: randomUUID(), email, passwordHash: null, createdAt: now, updatedAt: now } });
        // Joins the default project with AUTH_OIDC_DEFAULT_ROLE; other projects' admins add them to theirs.
        await tx.projectMember.create({ data: { projectId: DEFAULT_PROJECT, userId: user.id, role: defaultRole, createdAt: now.toISOString() } });
        await recordSecurityEvent(tx, email, { type: "user.created", email, role: defaultRole, via: "sso", source });
      }
      await tx.oidcIdentity.create({ data: { issuer: claims.issuer, subject: claims.subject, userId: user.id, email, createdAt: now } });
      await recordSecurityEvent(tx, user.email, { type: "identity.linked", email: user.email, issuer: claims.issuer, subject: claims.subject, source });
    }
    if (user.disabled) return refuse("disabled", "account disabled", user.email);
    await recordSecurityEvent(tx, user.email, { type: "signin.succeeded", email: user.email, method: "oidc", source });
    return { ok: true as const, user: { id: user.id, email: user.email, sessionVersion: user.sessionVersion } };
  });
}

/** The user an already-linked identity belongs to (for the session made right after sign-in). */
export async function userForIdentity(issuer: string, subject: string): Promise<SsoUser | null> {
  const db = await reader();
  const linked = await db.oidcIdentity.findUnique({ where: { issuer_subject: { issuer, subject } }, include: { user: true } });
  const user = linked?.user;
  if (!user || user.disabled) return null;
  return { id: user.id, email: user.email, sessionVersion: user.sessionVersion };
}
