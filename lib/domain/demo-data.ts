import essay from "./fixtures/essay-x-post.json";

/**
 * The demo data set: the essay's real X post, the paper's compounding-failure example, one
 * operation of every outcome and failure category, and a few hundred generated operations over
 * the last two weeks. Deterministic for a given `now` (a seeded generator), so it reads the
 * same on every laptop.
 */
type Rec = Record<string, unknown>;

const fp = (s: string) => `sha256:${Array.from(s).reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7).toString(16).padStart(8, "0").repeat(8)}`;

function at(base: Date, minutes: number): string {
  return new Date(base.getTime() + minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A small seeded generator: the same data on every machine. */
export function mulberry32(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const agent = { name: "dvnc", version: "1.4.0" };

function op(id: string, base: Date, o: {
  tool: string;
  trajectory?: string;
  depends_on?: string[];
  target: string;
  effect: string;
  params?: Rec;
  receipt?: "accepted" | "rejected" | null;
  receiptTool?: string;
  receiptParams?: Rec;
  partial?: boolean;
  reads?: { status: string; after: number; evidence?: unknown; reader?: Rec }[];
  effects?: [string, string][];
  idempotency?: Rec;
  claimed?: string;
  agentName?: string;
}): Rec {
  const record: Rec = {
    operation_id: id,
    ...(o.trajectory ? { trajectory_id: o.trajectory } : {}),
    ...(o.depends_on ? { depends_on: o.depends_on } : {}),
    agent: o.agentName ? { name: o.agentName, version: "0.9.2" } : agent,
    tool: { name: o.tool, version: "1" },
    claimed_outcome: o.claimed ?? "success",
    intent: { target: o.target, effect: o.effect, fingerprint: fp(id), ...(o.params ? { params: o.params } : {}) },
  };
  if (o.receipt !== null) {
    record.receipt = {
      status: o.receipt ?? "accepted",
      receipt_id: `rcpt-${id}`,
      observed_at: at(base, 0),
      ...(o.receiptTool ? { tool: o.receiptTool } : {}),
      ...(o.receiptParams ?? o.params ? { params: o.receiptParams ?? o.params } : {}),
      environment: { endpoint: `https://api.example.test/${o.tool.replace(".", "/")}`, region: "eu-west-1" },
      partial: o.partial ?? false,
    };
  }
  if (o.reads?.length) {
    record.canonical_read = o.reads.map((r) => ({
      status: r.status,
      observed_at: at(base, r.after),
      ...(r.evidence !== undefined ? { evidence: r.evidence === "match" ? { object_id: `obj-${id}`, fingerprint: fp(id) } : r.evidence } : {}),
      reader: r.reader ?? { identity: "reconcile-reader", account: "audit-ro", region: "eu-west-1", api_version: "2026-06" },
    }));
  }
  if (o.effects) record.side_effects = o.effects.map(([name, status]) => ({ name, status }));
  if (o.idempotency) record.idempotency = o.idempotency;
  return record;
}

export { DEMO_USERS } from "./demo-users";

export const DEMO_ESSAY_OPERATION_ID = essay.record.operation_id;

export function demoRecords(now = new Date()): Rec[] {
  const day = (d: number, h = 9) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - d, h, 0, 0));
  const records: Rec[] = [structuredClone(essay.record)];

  // The essay's trajectory continues: a LinkedIn post that verified, and an announcement that
  // links to the X post the records could not find (built on an unverified premise).
  const dvnc = essay.record.trajectory_id;
  const t0 = new Date("2026-08-28T14:40:00Z");
  records.push(
    op("op-2026-08-28-linkedin-001", t0, {
      tool: "social.publish", trajectory: dvnc, target: "social account (LinkedIn)", effect: "publish exactly one post",
      reads: [{ status: "match", after: 3, evidence: "match" }], effects: [["daily post ceiling decremented", "observed"]],
    }),
    op("op-2026-08-28-newsletter-002", new Date("2026-08-28T15:10:00Z"), {
      tool: "newsletter.send", trajectory: dvnc, depends_on: [essay.record.operation_id], target: "subscriber list",
      effect: "send the announcement linking to the X post", reads: [{ status: "match", after: 5, evidence: "match" }],
    }),
  );

  // The paper's compounding failure: a record that silently failed, and three steps built on it.
  const crm = "crm-onboarding-42";
  const c = day(3, 10);
  records.push(
    op("op-crm-42-create-account", c, {
      tool: "db.insert", trajectory: crm, target: "accounts table (production)", effect: "create the customer account",
      params: { table: "accounts", email: "ada@example.test" },
      reads: [{ status: "absent", after: 2, evidence: "SELECT by email returns no row", reader: { identity: "read replica", account: "audit-ro", region: "eu-west-1", api_version: "pg15" } }],
      effects: [["audit log row", "observed"], ["welcome-email queue entry", "unknown"]],
    }),
    op("op-crm-42-generate-contract", new Date(c.getTime() + 5 * 60_000), {
      tool: "files.generate", trajectory: crm, depends_on: ["op-crm-42-create-account"], target: "contract PDF",
      effect: "generate the contract referencing the account", reads: [{ status: "match", after: 1, evidence: "match" }],
    }),
    op("op-crm-42-upload-contract", new Date(c.getTime() + 8 * 60_000), {
      tool: "storage.upload", trajectory: crm, depends_on: ["op-crm-42-generate-contract"], target: "contracts bucket",
      effect: "upload the contract", reads: [{ status: "unavailable", after: 1, evidence: "bucket listing timed out" }],
    }),
    op("op-crm-42-notify", new Date(c.getTime() + 9 * 60_000), {
      tool: "notify.send", trajectory: crm, depends_on: ["op-crm-42-upload-contract"], target: "customer inbox",
      effect: "send the contract link", effects: [["email provider message id", "observed"]],
    }),
  );

  // One of every rule and failure category.
  const b = "billing-sync-7";
  const d = day(1, 8);
  const m = (n: number) => new Date(d.getTime() + n * 60_000);
  records.push(
    op("op-billing-7-refund", m(0), {
      tool: "payments.refund", trajectory: b, target: "order 5531", effect: "refund 20.00 EUR", receiptTool: "payments.charge",
      params: { order: "5531", amount: "20.00" }, reads: [{ status: "mismatch", after: 2, evidence: { object_id: "ch_5531", fingerprint: fp("charge") } }],
    }),
    op("op-billing-7-invoice", m(5), {
      tool: "invoices.update", trajectory: b, depends_on: ["op-billing-7-refund"], target: "invoice 2026-0117",
      effect: "mark the invoice refunded", params: { invoice: "2026-0117", status: "refunded" },
      receiptParams: { invoice: "2026-0117", status: "paid" }, reads: [{ status: "absent", after: 2 }],
    }),
    op("op-billing-7-copy-ledger", m(10), {
      tool: "files.copy", trajectory: b, target: "ledger archive", effect: "copy the ledger with read permissions",
      partial: true, reads: [{ status: "match", after: 1, evidence: "match" }],
      effects: [["permissions set", "not_observed"]],
    }),
    op("op-billing-7-ledger-post", m(15), {
      tool: "ledger.post", trajectory: b, target: "general ledger", effect: "post the refund entry",
      reads: [{ status: "match", after: 1, evidence: "match" }], idempotency: { enforced: true, key: "op-billing-7-ledger-post" },
    }),
    op("op-billing-7-ledger-post-dup", m(16), {
      tool: "ledger.post", trajectory: b, target: "general ledger", effect: "post the refund entry again", receipt: "rejected",
      claimed: "failure", reads: [{ status: "absent", after: 1 }],
    }),
    op("op-billing-7-receipt-email", m(20), {
      tool: "email.send", trajectory: b, target: "customer inbox", effect: "send the refund receipt", receipt: "rejected",
      claimed: "failure", reads: [{ status: "match", after: 4, evidence: "match" }],
    }),
    op("op-billing-7-cache", m(25), {
      tool: "cache.invalidate", trajectory: b, target: "pricing cache", effect: "invalidate the customer's price list",
      reads: [{ status: "match", after: 1 }], idempotency: { enforced: true, key: "cache-5531" },
    }),
    op("op-billing-7-stale", m(30), {
      tool: "crm.update", trajectory: b, target: "customer record", effect: "set the refund flag",
      reads: [{ status: "match", after: -3, evidence: "match" }],
    }),
    op("op-billing-7-fingerprint", m(35), {
      tool: "docs.publish", trajectory: b, target: "refund policy page", effect: "publish the revised policy",
      reads: [{ status: "match", after: 2, evidence: { object_id: "page-88", fingerprint: fp("an older revision") } }],
    }),
    op("op-billing-7-pending", m(40), {
      tool: "webhook.deliver", trajectory: b, target: "partner webhook", effect: "deliver the refund event", receipt: null,
    }),
  );

  // A few hundred ordinary operations over the last two weeks, mostly verified.
  const rnd = mulberry32(42);
  const tools = ["social.publish", "db.insert", "storage.upload", "email.send", "crm.update", "ledger.post", "tickets.create"];
  const agents = ["dvnc", "ops-bot", "billing-agent"];
  for (let i = 0; i < 240; i++) {
    // Anchored to `now`, never past it: each one's reads come a few minutes after its receipt,
    // and the server refuses observations dated in the future (TRUST.md).
    const base = new Date(now.getTime() - 15 * 60_000 - Math.floor(rnd() * 14 * 24 * 60) * 60_000);
    const r = rnd();
    const tool = tools[Math.floor(rnd() * tools.length)];
    const id = `op-gen-${String(i).padStart(4, "0")}`;
    const reads =
      r < 0.72 ? [{ status: "match", after: 2, evidence: "match" }]
        : r < 0.8 ? [{ status: "unavailable", after: 2 }]
          : r < 0.88 ? [{ status: "absent", after: 3 }]
            : r < 0.92 ? [{ status: "mismatch", after: 3, evidence: { object_id: `obj-${id}` } }]
              : [];
    records.push(
      op(id, base, {
        tool, target: `${tool.split(".")[0]} resource`, effect: `${tool.split(".")[1]} one object`,
        trajectory: `run-${Math.floor(i / 6)}`, agentName: agents[i % agents.length] === "dvnc" ? undefined : agents[i % agents.length],
        receipt: r > 0.96 ? "rejected" : "accepted", reads,
        idempotency: rnd() < 0.5 ? { enforced: true, key: id } : undefined,
        effects: rnd() < 0.3 ? [["quota counter decremented", "observed"]] : undefined,
      }),
    );
  }
  return records;
}
