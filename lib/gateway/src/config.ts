/**
 * The gateway's configuration (lib/gateway/README.md "Configuration"): one JSON file, validated with zod so
 * that every problem is named with its path, plus the environment for secrets (`{env.NAME}` in
 * upstream env and headers, the Reconcile token by the variable `reconcile.token_env` names).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { NAME_SCHEMES } from "./names.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "2m", "10s", "500ms", "1h" (or a number of milliseconds) as milliseconds. */
export function parseDuration(text: string | number): number | null {
  if (typeof text === "number") return Number.isFinite(text) && text >= 0 ? text : null;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNITS[m[2]]) : null;
}

const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({ code: "custom", message: 'a duration such as "10s", "2m" or "1h"' });
    return z.NEVER;
  }
  return ms;
});

/** What a tool does to the world (Reconcile's `kind` of an operation). */
export const CALL_KINDS = ["read", "idempotent", "write"] as const;
export type CallKind = (typeof CALL_KINDS)[number];
export const MAX_AWAIT_VERDICT_MS = 60_000;

const name = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, _ and - only (at most 64)");
const pointer = z.string().regex(/^(\/([^~]|~[01])*)*$/, 'a JSON pointer such as "/amount" or ""');
const json = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One condition on the call's arguments: the value at `pointer` compared with exactly one operator. */
export const conditionSchema = z
  .object({
    pointer,
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    eq: json.optional(),
    ne: json.optional(),
    in: z.array(json).max(1000).optional(),
    exists: z.boolean().optional(),
  })
  .strict()
  .refine((c) => OPERATORS.filter((o) => c[o] !== undefined).length === 1, { message: `exactly one of ${"gt, gte, lt, lte, eq, ne, in, exists"}` });
export const OPERATORS = ["gt", "gte", "lt", "lte", "eq", "ne", "in", "exists"] as const;
export type Condition = z.infer<typeof conditionSchema>;

export const toolRuleSchema = z
  .object({
    /** Fail closed when Reconcile cannot be reached (default: open, and recorded later). */
    critical: z.boolean().optional(),
    /** false: pass the call through without recording it (reads, searches). */
    record: z.boolean().optional(),
    /** false: every call is a new operation (calls meant to repeat); the retry gate never applies. */
    dedupe: z.boolean().optional(),
    /** The argument that names the operation (a request id): a JSON pointer. */
    operation_id_from: pointer.optional(),
    /** Where the result's structuredContent names what the call made (e.g. "/id"): the receipt's receipt_id, which verifiers read. */
    receipt_id_from: pointer.optional(),
    /** Held until a reviewer approves: always, or when any condition holds. */
    approval: z
      .object({ when: z.array(conditionSchema).max(50).optional(), expires: duration.optional() })
      .strict()
      .optional(),
    /** How long the upstream may take before the call's fate is unknown (default: the gateway's). */
    timeout: duration.optional(),
    /**
     * What the tool does to the world: `read` (forwarded, never gated or held, unrecorded unless
     * `record: true`), `idempotent` (a repeat is forwarded as a new attempt), `write` (the gate).
     * Silent: from the upstream's annotations, unless `trust_annotations` is false.
     */
    kind: z.enum(CALL_KINDS, { error: `one of ${CALL_KINDS.join(", ")}` }).optional(),
    /**
     * After an accepted receipt, wait up to this long (at most 60 s) for Reconcile's verdict and
     * answer the agent with it: verified, divergent (an error), or not verified yet.
     */
    await_verdict: duration
      .refine((ms) => ms <= MAX_AWAIT_VERDICT_MS, { message: `at most ${MAX_AWAIT_VERDICT_MS / 1000}s: longer, the agent should ask reconcile_status later` })
      .optional(),
  })
  .strict()
  .refine((r) => r.record !== false || (r.approval === undefined && r.critical === undefined && r.await_verdict === undefined), {
    message: 'a tool that is not recorded ("record": false) can be neither critical, held for approval nor wait for a verdict',
  })
  .refine((r) => r.kind !== "read" || (r.approval === undefined && r.critical === undefined && r.await_verdict === undefined), {
    message: 'a read ("kind": "read") is never gated, held or waited on: leave out critical, approval and await_verdict, or make it "idempotent" or "write"',
    path: ["kind"],
  });
export type ToolRule = z.infer<typeof toolRuleSchema>;

const stdioUpstream = z
  .object({
    command: z.array(z.string().min(1)).min(1, "the command and its arguments, e.g. [\"node\", \"server.js\"]"),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
  })
  .strict();
const httpUpstream = z
  .object({
    url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

export const configSchema = z
  .object({
    reconcile: z.object({ url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }), token_env: z.string().min(1).default("RECONCILE_TOKEN") }).strict(),
    listen: z
      .object({
        stdio: z.boolean().default(false),
        http: z
          .object({
            port: z.number().int().min(0).max(65535),
            host: z.string().default("127.0.0.1"),
            /** Host headers accepted (DNS rebinding protection); on a loopback host its own names are the default. */
            allowed_hosts: z.array(z.string().min(1)).max(100).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ stdio: true }),
    upstreams: z
      .record(name, z.union([stdioUpstream, httpUpstream], { error: 'an upstream has either "command" (stdio) or "url" (Streamable HTTP)' }))
      .refine((u) => Object.keys(u).length > 0, { message: "name at least one upstream MCP server" }),
    tools: z.record(z.string().min(1).max(200), toolRuleSchema).default({}),
    /**
     * How tools are named: `plain` (default) a tool's own name, `{upstream}.{tool}` when another
     * upstream offers the same; `prefixed` always `{upstream}__{tool}`, in `[a-zA-Z0-9_-]`, at
     * most 64 characters (what every model API accepts as a function name).
     */
    names: z.enum(NAME_SCHEMES, { error: `one of ${NAME_SCHEMES.join(", ")}` }).default("plain"),
    /** A call with the same key within this window is a repeat of the last one (default 2m). */
    dedupe_window: duration.default(120_000),
    /**
     * Whose calls are compared for repeats: `agent` (default: the calling agent's clientInfo name
     * and the gateway's Reconcile account, across MCP sessions and reconnects), `session` (one MCP
     * session only), `global` (any caller).
     */
    dedupe_scope: z.enum(["agent", "session", "global"], { error: "one of agent, session, global" }).default("agent"),
    /** How long a held call waits for a reviewer unless its rule says (default 10m). */
    approval_expires: duration.default(600_000),
    /** How often a client that asked for progress hears that its held call still waits (default 10s). */
    approval_progress_every: duration.default(10_000),
    /** How long an upstream may take (default 60s). */
    timeout: duration.default(60_000),
    /** Where records wait on disk until Reconcile has them (default: .reconcile-gateway beside the file); null: memory only. */
    journal_dir: z.string().min(1).nullable().optional(),
    /** Whether a tool's kind may come from its upstream's annotations (readOnlyHint, idempotentHint) when its rule is silent (default true). */
    trust_annotations: z.boolean().default(true),
    /** The gateway's own tool that tells an operation's outcome (default reconcile_status); false: not listed. */
    status_tool: z.union([z.literal(false), name]).default("reconcile_status"),
  })
  .strict()
  .refine((c) => c.listen.stdio || c.listen.http, { message: "listen on stdio, http, or both", path: ["listen"] });

export type GatewayConfig = z.infer<typeof configSchema>;
export type StdioUpstream = z.infer<typeof stdioUpstream>;
export type HttpUpstream = z.infer<typeof httpUpstream>;
export type Upstream = StdioUpstream | HttpUpstream;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** `{env.NAME}` in a string, from `env`; a missing variable is an error naming it. */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv, where: string): string {
  return text.replace(/\{env\.([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, v: string) => {
    const value = env[v];
    if (value === undefined) throw new ConfigError(`${where}: the environment variable ${v} is not set`);
    return value;
  });
}

/** Every problem with its path, one a line. */
function describe(error: z.ZodError): string {
  return error.issues.map((i) => `  ${i.path.length ? i.path.join(".") : "(the file)"}: ${i.message}`).join("\n");
}

/** Validates a parsed configuration; throws ConfigError listing every problem. */
export function parseConfig(value: unknown, source = "the configuration"): GatewayConfig {
  const parsed = configSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${source} is not valid:\n${describe(parsed.error)}`);
  return parsed.data;
}

/** Reads and validates a configuration file; stdio upstreams' relative `cwd` is taken from the file's folder. */
export function loadConfig(file: string): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read ${file}: ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${file} is not JSON: ${(e as Error).message}`);
  }
  const config = parseConfig(value, file);
  const dir = path.dirname(path.resolve(file));
  for (const u of Object.values(config.upstreams)) if ("command" in u) u.cwd = path.resolve(dir, u.cwd ?? ".");
  if (config.journal_dir !== null) config.journal_dir = path.resolve(dir, config.journal_dir ?? ".reconcile-gateway");
  return config;
}
