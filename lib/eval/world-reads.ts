import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { INDEX_LAG } from "./arms";
import { draw } from "./tasks";
import { readSnapshot, TOOLS, type Entry, type Read, type Tool } from "./world";
import type { WorldCall } from "./world-mcp";

/**
 * Arm D's canonical reads (issue 48 part 5): a small HTTP service on 127.0.0.1 that Reconcile's
 * verifiers read, one GET per operation: `/reads/{operation_id}`. It answers **as of the
 * operation's logical step, never wall time**, so a run stays a function of its seed:
 *
 * - the world's state is snapshotted the moment the tool runs the call (WorldTools' onCall), under
 *   the id the gateway gives that operation (the step's request id, `~2`, `~3` for attempts the
 *   gateway forwarded again), so a read that comes in late — after later calls changed the world,
 *   as a rejected call's check may, the gateway not waiting for it — sees what it would have seen;
 * - the search index's lag is judged at the call's tick plus READ_AFTER_TICKS (the index's lag):
 *   the verifier's window covers the lag, as a verifier's `pending_until` is meant to. The world's
 *   clock never moves for a read, so how many reads came, and when, changes nothing;
 * - the category-5 fault (the read-back cannot be made) is the same draw arms A–C meet: 503.
 *
 * A read of an operation the world has not seen (a call that never reached the tool) is 404.
 */

/** Ticks after the call at which a verifier read sees the world: the index's lag, which the window covers. */
export const READ_AFTER_TICKS = INDEX_LAG;

type Snapshot = { call: WorldCall; at: number; entries: (Entry | undefined)[]; unavailable: boolean };

export type ReadSeen = { operation: string; status: Read["status"] | "unknown" };

export class WorldReads {
  private readonly snapshots = new Map<string, Snapshot>();
  /** Every read served, in order (the evaluator's record; the agent never sees it). */
  readonly seen: ReadSeen[] = [];

  constructor(
    private readonly seed: number,
    /** The operation id the gateway gives a call (requestIdOf, and `~n` for attempt n − 1). */
    private readonly operationOf: (call: WorldCall) => string,
  ) {}

  /** WorldTools' onCall: the world as the call left it. */
  readonly onCall = (call: WorldCall, snapshot: { at: number; entries: (Entry | undefined)[] }) => {
    this.snapshots.set(this.operationOf(call), { call, ...snapshot, unavailable: draw(this.seed, call.task, call.step, call.attempt).readUnavailable });
  };

  /** What a verifier's read of this operation finds (the same answer however often and whenever it is asked). */
  read(operation: string): (Read & { value?: Record<string, unknown> }) | null {
    const s = this.snapshots.get(operation);
    if (!s) return null;
    if (s.unavailable) return { status: "unavailable" };
    return readSnapshot(s.call.intent, s.entries, s.at + READ_AFTER_TICKS);
  }

  async listen(): Promise<{ base: string; close: () => Promise<void> }> {
    const http = createServer((req, res) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const m = /^\/reads\/([^/?]+)$/.exec(req.url ?? "");
      if (req.method !== "GET" || !m) return send(404, { error: "no such path" });
      let operation: string;
      try {
        operation = decodeURIComponent(m[1]);
      } catch {
        return send(400, { error: "the operation id is not URL-encoded text" });
      }
      const r = this.read(operation);
      this.seen.push({ operation, status: r?.status ?? "unknown" });
      if (!r) return send(404, { error: `no call of operation ${operation} reached the tools` });
      if (r.status === "unavailable") return send(503, { error: "the backend cannot be read now" });
      if (r.status === "absent") return send(404, { error: "not found" });
      return send(200, { data: { id: r.evidence!.object_id, value: r.value, sha256: r.evidence!.fingerprint } });
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    return {
      base: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      close: async () => {
        http.closeAllConnections();
        await new Promise((r) => http.close(r));
      },
    };
  }
}

/**
 * The verifiers arm D's Reconcile holds, one per tool (docs/API.md "Verifiers"): GET the
 * operation's read; 503 is unavailable, 404 absent, 200 a match when the value is the intent's
 * (`{intent.params.value}`, the tool call's own argument), with the object and its fingerprint as
 * evidence, else a mismatch. One check, at `0s`, which is also the window's end, so the first
 * read decides and `await_verdict` has it at once.
 */
export function worldVerifiers(base: string, names: readonly Tool[] = TOOLS) {
  return names.map((tool) => ({
    name: `eval-${tool.replaceAll("_", "-")}`,
    tool,
    request: { method: "GET" as const, url: `${base}/reads/{operation_id}` },
    expect: [
      { when: { status: 503 }, read: "unavailable" as const },
      { when: { status: 404 }, read: "absent" as const },
      { when: { status: 200, json: { "/data/value": "{intent.params.value}" } }, read: "match" as const, evidence: { object_id: "/data/id", fingerprint: "/data/sha256" } },
      { when: { status: 200 }, read: "mismatch" as const, evidence: { object_id: "/data/id", fingerprint: "/data/sha256" } },
    ],
    window: { checks_at: ["0s"], pending_until: "0s" },
    allow_hosts: [new URL(base).hostname],
  }));
}
