import { z } from "zod";

/**
 * Security events, one typed shape per `type`, all appended to the audit chain. Built only
 * through `securityEvent()` so that every event is validated before it is chained.
 */
const base = { source: z.string().nullable().optional() };
export const securityEventSchema = z.discriminatedUnion("type", [
  /** `role` is the new user's role in `project` (the default project when absent: records before projects). */
  z.object({ type: z.literal("user.created"), email: z.string(), role: z.string(), project: z.string().optional(), instance_admin: z.boolean().optional(), via: z.enum(["cli", "setup", "admin", "demo", "sso"]), ...base }),
  /** An instance admin made a user an instance admin, or took it away. */
  z.object({ type: z.literal("user.instance_admin"), email: z.string(), granted: z.boolean(), ...base }),
  /** An instance admin created a project (lib/domain/projects.ts). */
  z.object({ type: z.literal("project.created"), project: z.string(), name: z.string(), retention_days: z.number().nullable(), ...base }),
  /** A project's admin renamed it or changed its retention (`retention_days` null: the instance's default). Only what changed is named. */
  z.object({
    type: z.literal("project.changed"),
    project: z.string(),
    name: z.object({ from: z.string(), to: z.string() }).optional(),
    retention_days: z.object({ from: z.number().nullable(), to: z.number().nullable() }).optional(),
    ...base,
  }),
  /** A user added to a project (`from` null) or given another role there. */
  z.object({ type: z.literal("member.set"), project: z.string(), email: z.string(), from: z.string().nullable(), to: z.string(), ...base }),
  z.object({ type: z.literal("member.removed"), project: z.string(), email: z.string(), role: z.string(), ...base }),
  z.object({ type: z.literal("user.role_changed"), email: z.string(), from: z.string(), to: z.string(), project: z.string().optional(), ...base }),
  z.object({ type: z.literal("user.disabled"), email: z.string(), ...base }),
  z.object({ type: z.literal("user.enabled"), email: z.string(), ...base }),
  z.object({ type: z.literal("token.created"), token_id: z.string(), owner: z.string(), name: z.string(), scopes: z.array(z.string()), project: z.string().optional(), ...base }),
  z.object({ type: z.literal("token.revoked"), token_id: z.string(), owner: z.string(), ...base }),
  z.object({ type: z.literal("signin.succeeded"), email: z.string(), method: z.string(), ...base }),
  /** `email` is the account's email when the identifier names a user, else its digest (`sha256:…`). */
  z.object({ type: z.literal("signin.failed"), email: z.string(), reason: z.string(), method: z.string().optional(), ...base }),
  /**
   * Once per throttled key and throttle window: later refused attempts in that window add nothing.
   * `key` is the account (email, or the identifier's digest) or the address; `until` the window's end.
   */
  z.object({ type: z.literal("signin.throttled"), scope: z.enum(["account", "address"]), key: z.string(), until: z.string(), ...base }),
  z.object({ type: z.literal("signout"), email: z.string(), ...base }),
  /** A user chose a new password (their own, or the one an admin set, at first sign-in). */
  z.object({ type: z.literal("password.changed"), email: z.string(), ...base }),
  /** An admin set a user's password; the user must change it at their next sign-in, and their sessions ended. */
  z.object({ type: z.literal("password.reset"), email: z.string(), ...base }),
  /** An admin ended every session of a user ("sign out everywhere"). */
  z.object({ type: z.literal("sessions.ended"), email: z.string(), ...base }),
  /** A single sign-on identity (issuer + subject) linked to a user at its first sign-in. */
  z.object({ type: z.literal("identity.linked"), email: z.string(), issuer: z.string(), subject: z.string(), ...base }),
  /**
   * A principal refused a permission. `until`: the end of the window this refusal opened (issue
   * 47); later refusals of the same principal and permission before it are counted, not chained
   * (lib/store/chain/refusals.ts). Absent on records from before.
   */
  z.object({ type: z.literal("authorization.refused"), permission: z.string(), method: z.string(), path: z.string(), until: z.string().optional(), ...base }),
  /**
   * The tally of a window that closed with more than one refusal: `count` refusals (the first,
   * chained as authorization.refused, included) from `first_at` to `last_at`. `permission` "*":
   * refusals of several permissions beyond the principal's first few in that window.
   */
  z.object({ type: z.literal("authorization.refusals"), permission: z.string(), count: z.number(), first_at: z.string(), last_at: z.string(), until: z.string(), ...base }),
  z.object({ type: z.literal("audit.exported"), format: z.string(), filter: z.record(z.string(), z.unknown()), ...base }),
  z.object({ type: z.literal("projections.rebuilt"), operations: z.number(), ...base }),
  /** A verifier's new version (VERIFIERS.md): every version is chained, never edited; disabling is a version too. */
  z.object({ type: z.literal("verifier.version"), name: z.string(), version: z.number(), tool: z.string(), enabled: z.boolean(), definition: z.record(z.string(), z.unknown()), ...base }),
  /** An admin set (or, with rate 0, removed) a tool's audit sampling rate (docs/API.md "Metrics"). */
  z.object({ type: z.literal("audit_sampling.changed"), tool: z.string(), rate: z.number(), ...base }),
  /** An admin stored a verifier secret (`{secret.NAME}`), new or `replaced`; its value is never chained. */
  z.object({ type: z.literal("verifier.secret_set"), name: z.string(), replaced: z.boolean(), ...base }),
  z.object({ type: z.literal("verifier.secret_deleted"), name: z.string(), ...base }),
  /** Retention sealed a segment of a chain into the archive and deleted its records (docs/DEPLOY.md "Retention and archive"). */
  z.object({
    type: z.literal("archive.sealed"),
    chain: z.number(),
    first_seq: z.number(),
    last_seq: z.number(),
    records: z.number(),
    head_hash: z.string(),
    segment: z.string(),
    location: z.string(),
    sha256: z.string(),
    ...base,
  }),
]);
export type SecurityEvent = z.infer<typeof securityEventSchema>;

/**
 * The events about the instance's people and projects (sign-in, users, tokens, projects,
 * members): written in the instance's own chain, never in a project's (docs/AUDIT.md "The instance's security trail").
 * The rest (a project's settings, exports, refusals, archive) belong to the project they happen in.
 */
const INSTANCE_EVENT = /^(user|project|member|token|signin|password|identity)\.|^(signout|sessions\.ended)$/;

export function isInstanceEvent(type: SecurityEvent["type"]): boolean {
  return INSTANCE_EVENT.test(type);
}

export function securityEvent(event: SecurityEvent): SecurityEvent {
  return securityEventSchema.parse(event);
}

/**
 * One line about an event for a person reading the trail (the Security log page): what it is
 * about and how, from its own fields; the type itself is shown beside it.
 */
export function eventSummary(event: SecurityEvent): string {
  const e = event as Record<string, unknown>;
  const parts: string[] = [];
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  if (typeof e.email === "string") parts.push(e.email);
  if (typeof e.key === "string") parts.push(`${e.scope} ${e.key}`);
  if (typeof e.project === "string") parts.push(`project ${e.project}`);
  if (typeof e.name === "string" && event.type !== "project.changed") parts.push(`“${e.name}”`);
  if (event.type === "project.changed") {
    if (event.name) parts.push(`name “${event.name.from}” → “${event.name.to}”`);
    const days = (d: number | null) => (d === null ? "the server's default" : `${d} days`);
    if (event.retention_days) parts.push(`retention ${days(event.retention_days.from)} → ${days(event.retention_days.to)}`);
  }
  if ("from" in e && "to" in e) parts.push(`${e.from ?? "none"} → ${e.to}`);
  else if (typeof e.role === "string") parts.push(`as ${e.role}`);
  if (typeof e.granted === "boolean") parts.push(e.granted ? "granted" : "taken away");
  if (Array.isArray(e.scopes)) parts.push(`scopes ${e.scopes.join(", ")}`);
  if (typeof e.owner === "string") parts.push(`owner ${e.owner}`);
  if (typeof e.method === "string") parts.push(`via ${e.method}`);
  if (typeof e.via === "string") parts.push(`via ${e.via}`);
  if (typeof e.reason === "string") parts.push(`(${e.reason})`);
  if (event.type === "authorization.refusals") parts.push(`${event.permission} refused ${event.count} times, ${event.first_at} to ${event.last_at}`);
  else if (typeof e.permission === "string") parts.push(`${e.permission} at ${text(e.path)}`);
  if (typeof e.until === "string") parts.push(`until ${e.until}`);
  if (typeof e.issuer === "string") parts.push(`${e.issuer} / ${text(e.subject)}`);
  if (event.type === "audit.exported") parts.push(`${event.format}${Object.keys(event.filter).length ? ` ${JSON.stringify(event.filter)}` : ""}`);
  return parts.join(" · ");
}
