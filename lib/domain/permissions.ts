/**
 * The one permission table: roles, token scopes and what each allows. Server checks and UI
 * both read it, so a button a role may not use is never shown and the server refuses anyway.
 */
export const ROLES = ["viewer", "reviewer", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const SCOPES = ["ingest", "verify", "read", "export", "review", "admin", "metrics"] as const;
export type Scope = (typeof SCOPES)[number];

const ROLE_RANK: Record<Role, number> = { viewer: 0, reviewer: 1, admin: 2 };

/** The minimum role of a token's owner for each scope (docs/API.md "Authentication"). */
export const SCOPE_MIN_ROLE: Record<Scope, Role> = {
  ingest: "viewer",
  /** Canonical reads decide verdicts (docs/API.md "Who may write what"). */
  verify: "reviewer",
  read: "viewer",
  export: "viewer",
  review: "reviewer",
  /** Managing verifiers (they make the server send requests, with secrets): admins only. */
  admin: "admin",
  /** Scraping GET /metrics (instance-wide figures, no operation's content): the operator's, so admins only. */
  metrics: "admin",
};

/**
 * Each permission is a project's (the principal's role in the project the request is about, and a
 * token's scopes) unless it says `instance: true`: then it is the instance's, held by instance
 * admins (lib/domain/projects.ts), and a token needs its scope too.
 */
export const PERMISSIONS = {
  "receipts:ingest": { scope: "ingest", minRole: "viewer" },
  "receipts:verify": { scope: "verify", minRole: "reviewer" },
  "operations:read": { scope: "read", minRole: "viewer" },
  "audit:export": { scope: "export", minRole: "viewer" },
  "operations:correct": { scope: "review", minRole: "reviewer" },
  /** Creating, disabling and resetting users: the instance's (users are not a project's). */
  "users:manage": { scope: null, minRole: "admin", instance: true },
  /** Creating projects (GET/POST /api/v1/projects): instance admins. */
  "projects:manage": { scope: "admin", minRole: "admin", instance: true },
  /** Adding members to a project and setting their roles: the project's admins. */
  "members:manage": { scope: "admin", minRole: "admin" },
  /** Renaming a project and setting its retention: the project's admins. */
  "project:settings": { scope: "admin", minRole: "admin" },
  "metrics:sampling": { scope: null, minRole: "admin" },
  "tokens:own": { scope: null, minRole: "viewer" },
  "verifiers:manage": { scope: "admin", minRole: "admin" },
  /** Admins: a session, or a token with the admin scope (an endpoint receives every operation's summary). */
  "webhooks:manage": { scope: "admin", minRole: "admin" },
  /**
   * The instance's own security trail (sign-in, users, tokens, projects, members: GET
   * /api/v1/security-events, the Security log page): instance admins, a session or a token with
   * the admin scope (everyone's emails and addresses: not what an export-only token is for).
   */
  "instance:audit": { scope: "admin", minRole: "admin", instance: true },
  /** GET /metrics (Prometheus: the whole server's figures): a token with the metrics scope, or a session, of an instance admin. */
  "server:metrics": { scope: "metrics", minRole: "admin", instance: true },
  /** GET /api/v1/token: who the caller is (its project, a token's scopes); any session, any token of any scope. */
  "caller:read": { scope: null, minRole: "viewer", anyToken: true },
} as const satisfies Record<string, { scope: Scope | null; minRole: Role; instance?: true; anyToken?: true }>;
export type Permission = keyof typeof PERMISSIONS;

export function isRole(v: unknown): v is Role {
  return typeof v === "string" && (ROLES as readonly string[]).includes(v);
}

export function isScope(v: unknown): v is Scope {
  return typeof v === "string" && (SCOPES as readonly string[]).includes(v);
}

export function roleAtLeast(role: Role, min: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[min];
}

/** Scopes a token may carry for an owner of this role. */
export function scopesAllowedFor(role: Role): Scope[] {
  return SCOPES.filter((s) => roleAtLeast(role, SCOPE_MIN_ROLE[s]));
}

/** The project a request is about: a token's own, or the one a page's `/p/{slug}` names. */
export type ProjectRef = { id: string; slug: string; name: string };

/** Who is asking, about which project, with their role in it (an instance admin's is admin). */
export type Principal =
  | { kind: "session"; userId: string; email: string; role: Role; instanceAdmin: boolean; project: ProjectRef }
  | { kind: "token"; userId: string; email: string; role: Role; instanceAdmin: boolean; project: ProjectRef; tokenId: string; tokenName: string; scopes: Scope[] };

/** What each permission lets one do, for messages ("this token may not …"). */
const DOING: Record<Permission, string> = {
  "receipts:ingest": "send receipts",
  "receipts:verify": "send canonical reads",
  "operations:read": "read operations",
  "audit:export": "export the audit trail",
  "operations:correct": "correct operations",
  "users:manage": "manage users",
  "projects:manage": "create projects",
  "members:manage": "manage a project's members",
  "project:settings": "change a project's name or retention",
  "metrics:sampling": "set audit sampling rates",
  "tokens:own": "own API tokens",
  "caller:read": "say who it is",
  "verifiers:manage": "manage verifiers",
  "webhooks:manage": "manage webhooks",
  "instance:audit": "read the instance's security trail",
  "server:metrics": "read the server's metrics",
};

/** Why `can` said no, in words: what is missing, a role or a token scope. */
export function refusal(principal: Principal, permission: Permission): string {
  const rule = PERMISSIONS[permission];
  const who = principal.kind === "token" ? "this token" : "this account";
  if (isInstancePermission(permission) && !principal.instanceAdmin) return `${who} may not ${DOING[permission]}: that needs an instance admin`;
  if (!roleAtLeast(principal.role, rule.minRole)) return `${who} may not ${DOING[permission]}: that needs the ${rule.minRole} role${rule.minRole === "admin" ? "" : " or above"}`;
  if (principal.kind === "token" && rule.scope) return `${who} may not ${DOING[permission]}: that needs a token with the ${rule.scope} scope`;
  return `${who} may not ${DOING[permission]}`;
}

/**
 * Whether a principal may use a permission. A token needs the scope *and* an owner whose
 * current role still allows it (a demoted owner's review token stops reviewing).
 */
export function can(principal: Principal, permission: Permission): boolean {
  const rule = PERMISSIONS[permission];
  if (isInstancePermission(permission) && !principal.instanceAdmin) return false;
  if (!roleAtLeast(principal.role, rule.minRole)) return false;
  if (principal.kind === "token") return "anyToken" in rule || (rule.scope !== null && principal.scopes.includes(rule.scope));
  return true;
}

/** Whether a permission is the instance's (instance admins) rather than a project's. */
export function isInstancePermission(permission: Permission): boolean {
  return "instance" in PERMISSIONS[permission];
}
