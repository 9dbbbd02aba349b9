/**
 * bench:ui's data: deterministic operations shaped like lib/domain/demo-data.ts (the outcome
 * mix, tools, agents, interleaved trajectories with depends_on links, late reads).
 */
import { sha256Hex } from "@/lib/domain/hash";
import { mulberry32 } from "@/lib/domain/demo-data";

export type Rec = Record<string, unknown>;

export const TOOLS = ["social.publish", "db.insert", "storage.upload", "email.send", "crm.update", "ledger.post", "tickets.create"];
const AGENTS = [
  { name: "dvnc", version: "1.4.0" },
  { name: "ops-bot", version: "0.9.2" },
  { name: "billing-agent", version: "2.1.0" },
];
const READER = { identity: "reconcile-reader", account: "audit-ro", region: "eu-west-1", api_version: "2026-06" };
/** Trajectories open at once: steps of concurrent agent runs interleave in the chain. */
const ACTIVE_TRAJECTORIES = 64;
/** Share of operations whose canonical read arrives in a later request. */
export const LATE_READ = 0.1;

type Trajectory = { id: string; left: number; steps: string[] };

export class Generator {
  private rnd: () => number;
  private ids = new Set<string>();
  private active: Trajectory[] = [];
  private made = 0;
  private readonly start: number;
  private readonly span: number;

  /**
   * `seed`: another seed makes other ids (bench:growth adds to a database bench:ui seeded).
   * `spanMs`: how long before now (less an hour) the calls spread over.
   */
  constructor(
    private readonly total: number,
    seed = 20261130,
    spanMs = 30 * 24 * 3600_000,
  ) {
    this.rnd = mulberry32(seed);
    // Calls spread over the 30 days before the seed by default, so the overview's periods see them.
    this.span = spanMs;
    this.start = Date.now() - this.span - 3600_000;
  }

  get count() {
    return this.made;
  }

  private hex(n: number): string {
    let s = "";
    while (s.length < n) s += Math.floor(this.rnd() * 0x1000000).toString(16).padStart(6, "0");
    return s.slice(0, n);
  }

  private unique(prefix: string, n: number): string {
    for (;;) {
      const id = `${prefix}${this.hex(n)}`;
      if (!this.ids.has(id)) {
        this.ids.add(id);
        return id;
      }
    }
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)];
  }

  private trajectory(): Trajectory | null {
    if (this.rnd() < 0.05) return null; // a few operations belong to no run
    if (this.active.length < ACTIVE_TRAJECTORIES) {
      const t = { id: this.unique("run-", 10), left: 3 + Math.floor(this.rnd() * 7), steps: [] };
      this.active.push(t);
      return t;
    }
    return this.pick(this.active);
  }

  /** One operation: the record carrying its first stages, and the late read record if any. */
  next(): { first: Rec; late: Rec | null } {
    const i = this.made++;
    const id = this.unique("op-", 12);
    const at = (minutes: number) =>
      new Date(this.start + Math.floor((i / this.total) * this.span) + Math.floor(minutes * 60_000)).toISOString().replace(/\.\d{3}Z$/, "Z");
    const tool = this.pick(TOOLS);
    const [family, verb] = tool.split(".");
    const agent = this.pick(AGENTS);
    const t = this.trajectory();
    const depends_on: string[] = [];
    if (t && t.steps.length && this.rnd() < 0.35) {
      depends_on.push(t.steps[t.steps.length - 1]);
      if (t.steps.length > 1 && this.rnd() < 0.15) depends_on.push(t.steps[t.steps.length - 2]);
    }
    const fingerprint = `sha256:${sha256Hex(id)}`;
    const params = { object: `${family}-${Math.floor(this.rnd() * 5000)}`, amount: (Math.floor(this.rnd() * 100_000) / 100).toFixed(2) };
    const r = this.rnd();
    const rejected = r >= 0.96;
    const evidence = { object_id: `obj-${id.slice(3)}`, fingerprint };
    // Outcome mix as in the demo: 72 % verified; uncertain (unavailable, no read); divergent
    // (absent, mismatch, wrong tool, wrong params, partial); 4 % rejected.
    type Read = { status: string; after: number; evidence?: unknown };
    let reads: Read[];
    let receiptTool: string | undefined;
    let receiptParams: Rec = params;
    let partial = false;
    if (r < 0.72) reads = [{ status: "match", after: 2, evidence }];
    else if (r < 0.8) reads = [{ status: "unavailable", after: 2 }];
    else if (r < 0.87) reads = [{ status: "absent", after: 3 }];
    else if (r < 0.905) reads = [{ status: "mismatch", after: 3, evidence: { object_id: `obj-${id.slice(3)}` } }];
    else if (r < 0.91) {
      receiptTool = this.pick(TOOLS.filter((x) => x !== tool)); // category 1
      reads = [{ status: "mismatch", after: 2, evidence: { object_id: `obj-${id.slice(3)}`, fingerprint: `sha256:${sha256Hex(`other-${id}`)}` } }];
    } else if (r < 0.915) {
      receiptParams = { ...params, amount: "0.00" }; // category 2
      reads = [{ status: "absent", after: 2 }];
    } else if (r < 0.92) {
      partial = true; // category 3
      reads = [{ status: "match", after: 1, evidence }];
    } else if (r < 0.96) reads = [];
    else reads = this.rnd() < 0.5 ? [{ status: "absent", after: 1 }] : [];
    // A re-check now and then: a second read a little later, same verdict.
    if (reads.length && this.rnd() < 0.05) reads.push({ ...reads[0], after: reads[0].after + 10 });

    const record: Rec = {
      operation_id: id,
      ...(t ? { trajectory_id: t.id } : {}),
      ...(depends_on.length ? { depends_on } : {}),
      agent,
      tool: { name: tool, version: "1" },
      claimed_outcome: rejected ? "failure" : "success",
      intent: { target: `${family} resource ${Math.floor(this.rnd() * 500)}`, effect: `${verb} one object`, fingerprint, params },
      receipt: {
        status: rejected ? "rejected" : "accepted",
        receipt_id: `rcpt-${id.slice(3)}`,
        observed_at: at(0),
        ...(receiptTool ? { tool: receiptTool } : {}),
        params: receiptParams,
        environment: { endpoint: `https://api.example.test/${family}/${verb}`, region: "eu-west-1" },
        partial,
      },
    };
    if (this.rnd() < 0.5) record.idempotency = { enforced: true, key: id };
    const readRecords = reads.map((x) => ({
      status: x.status,
      observed_at: at(x.after),
      ...(x.evidence !== undefined ? { evidence: x.evidence } : {}),
      reader: READER,
    }));
    const sideEffects = this.rnd() < 0.3 ? [{ name: "quota counter decremented", status: this.rnd() < 0.9 ? "observed" : "not_observed" }] : null;

    let late: Rec | null = null;
    if (readRecords.length && this.rnd() < LATE_READ) {
      late = { operation_id: id, canonical_read: readRecords, ...(sideEffects ? { side_effects: sideEffects } : {}) };
    } else {
      if (readRecords.length) record.canonical_read = readRecords;
      if (sideEffects) record.side_effects = sideEffects;
    }
    if (t) {
      t.steps.push(id);
      if (--t.left === 0) this.active.splice(this.active.indexOf(t), 1);
    }
    return { first: record, late };
  }
}
