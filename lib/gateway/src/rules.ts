/**
 * Which rule governs a tool, and whether a call needs approval: pure functions of the
 * configuration and the call's arguments (docs/GATEWAY.md).
 */
import { createHash } from "node:crypto";
import { get as pointerGet, type Json } from "@hyperjump/json-pointer";
import canonicalizeImport from "canonicalize";
import { OPERATORS, type CallKind, type Condition, type ToolRule } from "./config.js";

const canonicalize = ((canonicalizeImport as unknown as { default?: unknown }).default ?? canonicalizeImport) as (v: unknown) => string | undefined;

/** RFC 8785 canonical JSON: the same text the server hashes, so digests agree. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value ?? null) ?? "null";
}

export const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The digest an approval binds to (the server computes the same from the recorded intent). */
export function paramsDigest(args: Record<string, unknown>): string {
  return `sha256:${sha256Hex(canonicalJson(args))}`;
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/** The rule of a tool: its exact name, else the longest pattern with `*` that matches; with the key it came from. */
export function ruleFor(tools: Record<string, ToolRule>, toolName: string): { key: string; rule: ToolRule } | null {
  if (Object.hasOwn(tools, toolName)) return { key: toolName, rule: tools[toolName] };
  let best: { key: string; rule: ToolRule } | null = null;
  for (const [key, rule] of Object.entries(tools)) {
    if (!key.includes("*") || !globToRegExp(key).test(toolName)) continue;
    if (!best || key.length > best.key.length) best = { key, rule };
  }
  return best;
}

/**
 * The tool's annotations are hints from the upstream: a destructive hint may only make the gateway
 * stricter; the read-only and idempotent hints name the tool's kind unless the configuration says
 * not to trust them (`trust_annotations: false`).
 */
export type ToolHints = { destructiveHint?: boolean; idempotentHint?: boolean; readOnlyHint?: boolean };

/**
 * A tool's kind: its rule's `kind`; else, when annotations are trusted, `readOnlyHint` → read,
 * `idempotentHint` → idempotent; else write. A rule that holds or gates the tool (critical,
 * approval) makes a silent kind a write whatever the hints say.
 */
export function toolKind(rule: ToolRule, hints: ToolHints | undefined, trustAnnotations: boolean): CallKind {
  if (rule.kind) return rule.kind;
  if (!trustAnnotations || rule.critical || rule.approval) return "write";
  if (hints?.readOnlyHint === true) return "read";
  if (hints?.idempotentHint === true) return "idempotent";
  return "write";
}

/**
 * The rule in force for a tool known by several spellings (its exposed name, `{upstream}.{tool}`,
 * the upstream's own name): an exact key on any spelling first, in that order, so that a rule
 * written for one tool always beats a pattern (a catch-all `*` never hides `billing.charge`);
 * else the longest pattern matching any spelling. Without one, a tool the upstream calls
 * destructive fails closed.
 */
export function effectiveRule(tools: Record<string, ToolRule>, names: string | string[], hints: ToolHints | undefined): { key: string | null; rule: ToolRule } {
  const spellings = Array.isArray(names) ? names : [names];
  for (const name of spellings) if (Object.hasOwn(tools, name)) return { key: name, rule: tools[name] };
  let best: { key: string; rule: ToolRule } | null = null;
  for (const name of spellings) {
    const found = ruleFor(tools, name);
    if (found && (!best || found.key.length > best.key.length)) best = found;
  }
  return best ?? { key: null, rule: hints?.destructiveHint === true ? { critical: true } : {} };
}

function valueAt(args: unknown, pointer: string): unknown {
  try {
    return pointerGet(pointer, args as Json);
  } catch {
    return undefined;
  }
}

/** Whether one condition holds for the arguments. A missing value holds only `exists: false` and `ne`. */
export function holds(c: Condition, args: unknown): boolean {
  const v = valueAt(args, c.pointer);
  if (c.exists !== undefined) return (v !== undefined) === c.exists;
  if (c.eq !== undefined) return v !== undefined && canonicalJson(v) === canonicalJson(c.eq);
  if (c.ne !== undefined) return v === undefined || canonicalJson(v) !== canonicalJson(c.ne);
  if (c.in !== undefined) {
    if (v === undefined) return false;
    const text = canonicalJson(v); // once, not once per listed value
    return c.in.some((x) => canonicalJson(x) === text);
  }
  // A number written as a string ("250") compares as the number it is.
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : null;
  if (n === null) return false;
  if (c.gt !== undefined) return n > c.gt;
  if (c.gte !== undefined) return n >= c.gte;
  if (c.lt !== undefined) return n < c.lt;
  return c.lte !== undefined && n <= c.lte;
}

const SYMBOL: Record<(typeof OPERATORS)[number], string> = { gt: ">", gte: "≥", lt: "<", lte: "≤", eq: "=", ne: "≠", in: "in", exists: "exists" };

/** A condition in words a reviewer reads: "/amount > 100". */
export function describeCondition(c: Condition): string {
  const op = OPERATORS.find((o) => c[o] !== undefined)!;
  if (op === "exists") return `${c.pointer || "(the arguments)"} ${c.exists ? "is present" : "is absent"}`;
  return `${c.pointer || "(the arguments)"} ${SYMBOL[op]} ${JSON.stringify(c[op])}`;
}

export type ApprovalNeed = { rule: string; rule_version: string; expiresMs: number };

/**
 * Whether this call must wait for a reviewer: its rule has `approval`, and it has no conditions or
 * one of them holds. The rule's text names what held it; its version is a digest of the rule as
 * configured, so a changed rule never reuses an approval given under the old one.
 */
export function approvalNeeded(toolName: string, found: { key: string | null; rule: ToolRule }, args: Record<string, unknown>, defaultExpiresMs: number): ApprovalNeed | null {
  const approval = found.rule.approval;
  if (!approval) return null;
  const when = approval.when ?? [];
  const matched = when.filter((c) => holds(c, args));
  if (when.length && !matched.length) return null;
  const rule = when.length ? `${toolName}: ${matched.map(describeCondition).join(" and ")}` : `${toolName}: every call`;
  const version = `${found.key ?? toolName}@${sha256Hex(canonicalJson(found.rule)).slice(0, 12)}`;
  return { rule, rule_version: version, expiresMs: approval.expires ?? defaultExpiresMs };
}
