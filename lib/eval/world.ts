import { createHash } from "node:crypto";

/**
 * Protocol 2's simulated environment (docs/EVALUATION.md "Method"): in-process
 * services with real state — a user store, a file store, a ledger, a message queue and an
 * eventually-consistent search index — that tools write to, faults bend, and the experiment
 * probes for ground truth. No network, no clock: time is a tick counter.
 */

/** A small, fast, seedable PRNG (mulberry32): the whole experiment is a function of --seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const fingerprintOf = (value: unknown) => `sha256:${createHash("sha256").update(JSON.stringify(value)).digest("hex")}`;

/** The paper's taxonomy (Table I) as injected faults, plus the two honest signals. */
export type Fault =
  | "none"
  | "wrong_tool" // category 1: the call reached another tool
  | "wrong_params" // category 2: the parameters passed were not the ones built
  | "partial" // category 3: half applied
  | "no_effect" // category 4: success signal without effect
  | "read_unavailable" // category 5 (in the verified arm): the canonical read-back cannot be made
  | "rejected" // the write boundary refused (honest)
  | "false_failure"; // applied, but the wrapper reported an error

export const TOOLS = ["env.users.create", "env.files.write", "env.ledger.transfer", "env.queue.publish", "env.index.put", "env.billing.charge_and_notify"] as const;
export type Tool = (typeof TOOLS)[number];

/** What a tool call is meant to do: a key in one backend and the value it should hold there. */
export type Intent = { tool: Tool; key: string; value: Record<string, unknown>; /** For compound steps: the key that must already exist. */ needs?: { tool: Tool; key: string } };

/** The receipt a tool hands back (Definition 4), in the wire format's shape. */
export type ToolReceipt = {
  status: "accepted" | "rejected";
  receipt_id: string;
  tool?: string;
  params: Record<string, unknown>;
  effects: { backend: string; key: string }[];
  partial: boolean;
};

/** A canonical read-back of the resource that owns the effect. */
export type Read = { status: "match" | "absent" | "mismatch" | "unavailable"; evidence?: { object_id: string; fingerprint: string } };

export type Entry = { value: Record<string, unknown>; fingerprint: string; complete: boolean; visibleAt: number };

/** One backend: keyed state; the search index makes writes visible only after a lag. */
class Backend {
  readonly state = new Map<string, Entry>();
  constructor(
    readonly name: string,
    private readonly lag: number,
  ) {}
  write(key: string, value: Record<string, unknown>, now: number, complete = true) {
    this.state.set(key, { value, fingerprint: fingerprintOf(value), complete, visibleAt: now + this.lag });
  }
  /** The truth: what the primary holds, visible or not. */
  probe(key: string): Entry | undefined {
    return this.state.get(key);
  }
  /** What a reader sees now (the index lags). */
  read(key: string, now: number): Entry | undefined {
    const e = this.state.get(key);
    return e && e.visibleAt <= now ? e : undefined;
  }
}

/** Which backends each tool writes: the cross-system tool writes two. */
export const BACKENDS: Record<Tool, string[]> = {
  "env.users.create": ["users"],
  "env.files.write": ["files"],
  "env.ledger.transfer": ["ledger"],
  "env.queue.publish": ["queue"],
  "env.index.put": ["index"],
  "env.billing.charge_and_notify": ["ledger", "queue"],
};

/** Faults under which a call writes the intended key (wrong_tool writes elsewhere; rejected and no_effect write nothing). */
export const WRITES_KEY: ReadonlySet<Fault> = new Set<Fault>(["none", "read_unavailable", "false_failure", "wrong_params", "partial"]);

export class World {
  private readonly backends: Map<string, Backend>;
  now = 0;
  private receipts = 0;
  /** Ground truth for duplicates: calls that applied again an intended effect already wholly in place. */
  duplicates = 0;
  constructor(indexLag: number) {
    this.backends = new Map(["users", "files", "ledger", "queue", "index"].map((n) => [n, new Backend(n, n === "index" ? indexLag : 0)]));
  }
  protected backend(name: string): Backend {
    return this.backends.get(name)!;
  }

  /** Executes a tool call under a fault; returns the tool's receipt. */
  call(intent: Intent, fault: Fault): ToolReceipt {
    if (this.wouldDuplicate(intent, fault)) this.duplicates++;
    this.now++;
    const id = `rcpt-${++this.receipts}`;
    const names = BACKENDS[intent.tool];
    const effects = names.map((backend) => ({ backend, key: intent.key }));
    const base = { receipt_id: id, params: intent.value, effects, partial: false };
    // A compound step whose premise does not hold still "runs": it writes a dangling reference.
    const premise = intent.needs ? this.holds(intent.needs) : true;
    const value = premise ? intent.value : { ...intent.value, dangling: true };
    switch (fault) {
      case "rejected":
        return { ...base, status: "rejected", effects: [] };
      case "false_failure":
        for (const n of names) this.backend(n).write(intent.key, value, this.now);
        return { ...base, status: "rejected", effects: [] };
      case "no_effect":
        return { ...base, status: "accepted" };
      case "wrong_tool": {
        // Routed to another backend: that one changes, the intended one does not.
        const other = names[0] === "files" ? "users" : "files";
        this.backend(other).write(`${intent.key}~misrouted`, value, this.now);
        return { ...base, status: "accepted", tool: other === "files" ? "env.files.write" : "env.users.create", effects: [{ backend: other, key: `${intent.key}~misrouted` }] };
      }
      case "wrong_params": {
        const wrong = { ...value, amount: 0, corrupted: true };
        for (const n of names) this.backend(n).write(intent.key, wrong, this.now);
        return { ...base, status: "accepted", params: wrong };
      }
      case "partial": {
        // The first backend only, or (one backend) the value without its last field; the receipt says so.
        if (names.length > 1) this.backend(names[0]).write(intent.key, value, this.now);
        else this.backend(names[0]).write(intent.key, { ...value, incomplete: true }, this.now, false);
        return { ...base, status: "accepted", partial: true };
      }
      case "none":
      case "read_unavailable": // a fault of the read-back, not of the call
        for (const n of names) this.backend(n).write(intent.key, value, this.now);
        return { ...base, status: "accepted" };
    }
  }

  /** Whether a call of this intent under this fault would apply again an effect already wholly in place. */
  wouldDuplicate(intent: Intent, fault: Fault): boolean {
    return WRITES_KEY.has(fault) && this.holds(intent);
  }

  /** Ground truth (Protocol 2, step 3): the intended postcondition holds in every backend it names. */
  holds(intent: Pick<Intent, "tool" | "key"> & { value?: Record<string, unknown> }): boolean {
    return BACKENDS[intent.tool].every((n) => {
      const e = this.backend(n).probe(intent.key);
      if (!e || !e.complete || e.value.dangling || e.value.corrupted) return false;
      return intent.value === undefined || e.fingerprint === fingerprintOf(intent.value);
    });
  }

  /**
   * τ-bench's pass criterion for one task: the environment's final state equals the task's goal
   * state — every step's intended value, whole, in every backend its tool names, and nothing else
   * under the task's keys (a misrouted write left behind is a difference too). The primary is
   * compared, not what a lagging reader sees. Returns the ids of the tasks that pass.
   */
  tasksAtGoal(tasks: readonly { id: string; steps: readonly Intent[] }[]): Set<string> {
    // The state under each task's keys ("t00042-s1", "t00042-s1~misrouted"): backend/key → fingerprint, or null when incomplete.
    const state = new Map<string, Map<string, string | null>>();
    for (const [name, b] of this.backends) {
      for (const [key, e] of b.state) {
        const task = key.slice(0, key.indexOf("-"));
        const m = state.get(task) ?? new Map<string, string | null>();
        m.set(`${name}/${key}`, e.complete ? e.fingerprint : null);
        state.set(task, m);
      }
    }
    const met = new Set<string>();
    for (const t of tasks) {
      const goal = new Map<string, string>();
      for (const s of t.steps) for (const n of BACKENDS[s.tool]) goal.set(`${n}/${s.key}`, fingerprintOf(s.value));
      const final = state.get(t.id) ?? new Map<string, string | null>();
      if (final.size === goal.size && [...goal].every(([k, f]) => final.get(k) === f)) met.add(t.id);
    }
    return met;
  }

  /**
   * What each backend of the intent's tool holds under its key now: entries are replaced, never
   * changed, on a write, so the snapshot stays what it was whatever is written later (arm D's
   * verifier reads answer from it: lib/eval/world-reads.ts).
   */
  snapshot(intent: Pick<Intent, "tool" | "key">): { at: number; entries: (Entry | undefined)[] } {
    return { at: this.now, entries: BACKENDS[intent.tool].map((n) => this.backend(n).probe(intent.key)) };
  }

  /** The canonical read-back an agent can make (the index lags; a category-5 fault makes it unavailable). */
  read(intent: Intent, unavailable: boolean): Read {
    this.now++;
    if (unavailable) return { status: "unavailable" };
    const want = fingerprintOf(intent.value);
    let seen: Entry | undefined;
    for (const n of BACKENDS[intent.tool]) {
      const e = this.backend(n).read(intent.key, this.now);
      if (!e) return { status: "absent" };
      if (!e.complete || e.fingerprint !== want || e.value.dangling) return { status: "mismatch", evidence: { object_id: `${n}:${intent.key}`, fingerprint: e.fingerprint } };
      seen = e;
    }
    return { status: "match", evidence: { object_id: `${BACKENDS[intent.tool][0]}:${intent.key}`, fingerprint: seen!.fingerprint } };
  }
}

/**
 * A read of a snapshot as a reader sees it at tick `now` (an entry written later than `now` minus
 * its lag is not visible yet): what World.read says, without moving the clock.
 */
export function readSnapshot(intent: Intent, entries: (Entry | undefined)[], now: number): Read & { value?: Record<string, unknown> } {
  const want = fingerprintOf(intent.value);
  const names = BACKENDS[intent.tool];
  let seen: Entry | undefined;
  for (let i = 0; i < names.length; i++) {
    const e = entries[i];
    if (!e || e.visibleAt > now) return { status: "absent" };
    if (!e.complete || e.fingerprint !== want || e.value.dangling) return { status: "mismatch", evidence: { object_id: `${names[i]}:${intent.key}`, fingerprint: e.fingerprint }, value: e.value };
    seen = e;
  }
  return { status: "match", evidence: { object_id: `${names[0]}:${intent.key}`, fingerprint: seen!.fingerprint }, value: seen!.value };
}
