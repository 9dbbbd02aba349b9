/**
 * Which operation a tools/call is (docs/GATEWAY.md "Each tools/call" 1). The argument the
 * config names (`operation_id_from`) when present; else `gw:{sha256(upstream, tool, canonical
 * arguments, MCP session)}:{n}`, where a call with the same key within the dedupe window is a
 * repeat of the last one and a later one (or any call of a `dedupe: false` tool) is a new `n`.
 */
import { get as pointerGet, type Json } from "@hyperjump/json-pointer";
import { MAX_OPERATION_ID, operationIdProblem } from "@reconcile/client";
import { canonicalJson, sha256Hex } from "./rules.js";

/** A caller's id is used as it is up to this length: attempts add `~{n}` and stay within the server's 200. */
const OWN_ID_MAX = 180;
/** Control characters, and UTF-16 halves without their pair: no id, even by digest. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\p{Cs}]/u;

export type CallerId = { id: string } | { refused: string } | null;

/**
 * The caller's own id for the call, when the rule names one and the arguments carry it, checked
 * as Reconcile checks operation ids (`operationIdProblem`, the client's copy of the server's
 * rule). An id the server would refuse only for a character a URL gives meaning to (`/`, `%`,
 * `.` or `..` alone, a space) is named by its digest instead: the same id, the same operation,
 * and nothing of it reaches a URL. One with control characters, or longer than the server's 200,
 * is refused: the call is not sent.
 */
export function callerId(args: Record<string, unknown>, pointer: string | undefined): CallerId {
  if (pointer === undefined) return null;
  let v: unknown;
  try {
    v = pointerGet(pointer, args as Json);
  } catch {
    return null;
  }
  if (typeof v === "number" && Number.isFinite(v)) v = String(v);
  if (typeof v !== "string" || v.length === 0) return null;
  if (v.length > MAX_OPERATION_ID) return { refused: `${pointer} is ${v.length} characters long: an operation id has at most ${MAX_OPERATION_ID}` };
  if (UNPRINTABLE.test(v)) return { refused: `${pointer} holds control characters (or a broken character): an operation id is printable text` };
  return { id: v.length <= OWN_ID_MAX && operationIdProblem(v) === null ? v : `gw-id:${sha256Hex(v)}` };
}

/** What a result names at `pointer` (its id), as text; null when it names nothing there. */
export function resultId(content: Record<string, unknown>, pointer: string): string | null {
  let v: unknown;
  try {
    v = pointerGet(pointer, content as Json);
  } catch {
    return null;
  }
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return typeof v === "string" && v.length > 0 && v.length <= 4096 ? v : null;
}

export const callKey = (upstream: string, tool: string, args: Record<string, unknown>, session: string) =>
  sha256Hex(canonicalJson([upstream, tool, args, session]));

/** The n-th attempt of an operation: the first is the id itself, later ones `{id}~{n}`. */
export const attemptId = (base: string, n: number) => (n <= 1 ? base : `${base}~${n}`);

type Seen = { n: number; at: number };

/**
 * What the gateway remembers of recent calls, per key (bounded: the oldest are forgotten first).
 * A repeat within the window is the same operation; anything else gets a new `n`, from one
 * counter for the whole process, so a key that was forgotten never gets an `n` it had before.
 */
export class RecentCalls {
  private readonly seen = new Map<string, Seen>();
  private counter = 0;
  constructor(
    private readonly windowMs: number,
    private readonly max = 10_000,
  ) {}

  /** The operation the last call with this key was, if this process remembers one (it starts nothing). */
  peek(key: string): string | null {
    const last = this.seen.get(key);
    return last ? `gw:${key}:${last.n}` : null;
  }

  /** The operation for a call with this key now, and whether it repeats one within the window. */
  next(key: string, now: number, dedupe: boolean): { id: string; repeat: boolean } {
    const last = this.seen.get(key);
    const repeat = dedupe && last !== undefined && now - last.at <= this.windowMs;
    const n = repeat ? last!.n : ++this.counter;
    this.seen.delete(key);
    this.seen.set(key, { n, at: now });
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value!);
    return { id: `gw:${key}:${n}`, repeat };
  }
}
