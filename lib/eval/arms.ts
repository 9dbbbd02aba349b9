import type { Claim, Review } from "@/lib/domain/metrics";
import type { Outcome } from "@/lib/domain/outcomes";
import { draw, type Task, type TaskKind } from "./tasks";
import { fingerprintOf, World, type Intent, type Read, type ToolReceipt } from "./world";

/**
 * Protocol 2's two arms (docs/EVALUATION.md "Method"): the same scripted agent, once believing what tools
 * return (arm A), once using Reconcile over HTTP — receipts and canonical reads sent to a real
 * server, the retry gate obeyed, divergences escalated to a reviewer who probes the environment
 * (arm B). Each arm logs every operation with its ground truth, probed right after the call.
 */

export const MAX_ATTEMPTS = 3;
/** Ticks before a write reaches the search index's readers. */
export const INDEX_LAG = 2;

export type OpLog = {
  id: string;
  kind: TaskKind;
  trajectory: string;
  tool: string;
  /** The intent's fingerprint as recorded (arm C's gateway records none: null). */
  fingerprint: string | null;
  /** Order of recording: what "later" means for recovery. */
  order: number;
  claim: Claim;
  /** Ground truth (Protocol 2 step 3): did the intended postcondition hold right after the call? */
  actual: "held" | "not_held";
  accepted: boolean;
  /** Arm B: verification's verdict; arm A has none (rejected receipts aside). */
  verdict: Outcome;
  review: Review;
  recovers: string[];
  sampled: boolean;
  /** With lying readers: the fault of the deciding read, when it lied (lib/eval/readers.ts). */
  lie?: string | null;
};

const claimOfBelief = (held: boolean | null): Claim => (held === null ? "none" : held ? "success" : "other");

/** Arm A: believes the tool. A rejected call is retried (a new call); an accepted one is done. */
export function runArmA(seed: number, tasks: Task[], world = new World(INDEX_LAG)): OpLog[] {
  const log: OpLog[] = [];
  for (const task of tasks) {
    for (let s = 0; s < task.steps.length; s++) {
      const intent = task.steps[s];
      let believed = false;
      let previous: string | null = null;
      for (let attempt = 0; attempt < MAX_ATTEMPTS && !believed; attempt++) {
        const { fault } = draw(seed, task, s, attempt);
        // No verification step: an unreadable resource (category 5) changes nothing for this agent.
        const receipt = world.call(intent, fault);
        const held = world.holds(intent);
        believed = receipt.status === "accepted";
        const id = `A-${task.id}-s${s}-a${attempt}`;
        log.push({
          id,
          kind: task.kind,
          trajectory: task.id,
          tool: intent.tool,
          fingerprint: fingerprintOf(intent.value),
          order: log.length,
          claim: claimOfBelief(believed),
          actual: held ? "held" : "not_held",
          accepted: believed,
          // Nothing verifies: the only failure the agent can see is a rejection.
          verdict: believed ? "uncertain" : "rejected",
          // The oracle knows every failure; nobody flagged it.
          review: held ? "none" : "not_applied",
          recovers: previous ? [previous] : [],
          sampled: false,
        });
        previous = id;
      }
      if (!believed) break; // gives up the task
    }
  }
  return log;
}

/** The classification Reconcile must give the records arm B sends (DOMAIN.md), for the shapes it sends. */
export function expectedVerdict(receipt: ToolReceipt, read: Read): Outcome {
  if (receipt.status === "rejected") return read.status === "match" ? "divergent" : "rejected";
  switch (read.status) {
    case "unavailable":
      return "uncertain";
    case "absent":
    case "mismatch":
      return "divergent";
    case "match":
      // Issue 54: the intent names a fingerprint, so a match that shows none (an empty body) is uncertain.
      return receipt.partial ? "divergent" : read.evidence?.fingerprint ? "verified" : "uncertain";
  }
}

export type Http = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export type ArmBOptions = {
  seed: number;
  tasks: Task[];
  /**
   * A real Reconcile server. Without one the agent runs the same script (its decisions rest on
   * the environment's reads and the reviewer's probes; the server's answers are checked against
   * them, never consulted), so the log and the environment's final state are the same: what the
   * pass^k trials rely on (lib/eval/trials.ts; eval.itest.ts shows the two agree).
   */
  http?: Http;
  /** Names the run's operations and agent, so that runs on one server stay apart. */
  prefix: string;
  agent: string;
  /** Receipt times: the first call's instant and the milliseconds per tick. */
  startMs: number;
  tickMs: number;
  /** Drawn as an audit sample at this rate (the server's deterministic draw, for the check). */
  isSampled: (operationId: string) => boolean;
  /** The environment (default a fresh one), to read its final state afterwards. */
  world?: World;
  /**
   * The world's readers may lie (lib/eval/readers.ts): an audit sample whose effect did not hold
   * is then retracted and resolved not_applied, as its reviewer finds it, instead of stopping the run.
   */
  lyingReaders?: boolean;
};

class Mismatch extends Error {}

/** Arm B: the same agent with Reconcile in the loop. */
export async function runArmB(o: ArmBOptions): Promise<OpLog[]> {
  const world = o.world ?? new World(INDEX_LAG);
  const http: Http = o.http ?? (() => Promise.reject(new Error("arm B: no server")));
  const server = o.http !== undefined;
  const log: OpLog[] = [];
  const at = () => new Date(o.startMs + world.now * o.tickMs).toISOString();
  const must = (what: string, res: { status: number; body: any }, ok: number[]) => {
    if (!ok.includes(res.status)) throw new Mismatch(`${what}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  /** The reviewer's resolution sent to Reconcile, whose effective outcome and retry gate must agree with it. */
  const resolve = async (id: string, outcome: "verified" | "not_applied", key: string) => {
    const held = outcome === "verified";
    must(
      `resolve ${id}`,
      await http("POST", `/api/v1/operations/${encodeURIComponent(id)}/corrections`, {
        action: "resolve",
        outcome,
        reason: held ? "probed the backend: the effect is there" : "probed the backend: the effect is not there",
        ...(held ? { evidence: { object_id: key } } : {}),
        expected_last_correction_id: null,
      }),
      [201],
    );
    const now = must(`read ${id}`, await http("GET", `/api/v1/operations/${encodeURIComponent(id)}`), [200]);
    if ((now.effective_outcome === "verified") !== held) throw new Mismatch(`${id}: resolved ${outcome}, Reconcile says ${now.effective_outcome}`);
    if (!held && now.retry.decision !== "a new operation may be issued") throw new Mismatch(`${id}: after not_applied the retry gate says ${JSON.stringify(now.retry)}`);
  };
  for (const task of o.tasks) {
    let premise: string | null = null;
    for (let s = 0; s < task.steps.length; s++) {
      const intent: Intent = task.steps[s];
      const fingerprint = fingerprintOf(intent.value);
      let done = false;
      let previous: string | null = null;
      for (let attempt = 0; attempt < MAX_ATTEMPTS && !done; attempt++) {
        const { fault, readUnavailable, wait } = draw(o.seed, task, s, attempt);
        const receipt = world.call(intent, fault);
        const receiptAt = at();
        const held = world.holds(intent);
        // A rejection justifies a new operation only once a settled read-back says the effect is
        // absent (essay 003): the agent gives a rejected write time to propagate before reading,
        // and reads again when the resource could not be read.
        world.now += receipt.status === "rejected" ? Math.max(wait, INDEX_LAG) : wait;
        // With lying readers, the fault of each read that lied (the world appends it to its lies).
        const lies = "lies" in world ? (world as World & { lies: { fault: string }[] }).lies : null;
        const readOnce = (unavailable: boolean) => {
          const before = lies?.length ?? 0;
          const r = world.read(intent, unavailable);
          return { read: r, at: at(), lie: lies && lies.length > before ? lies[lies.length - 1].fault : null };
        };
        const reads = [readOnce(readUnavailable)];
        if (receipt.status === "rejected" && reads[0].read.status === "unavailable") {
          world.now++;
          reads.push(readOnce(false));
        }
        const read = reads[reads.length - 1].read;
        const verdict = expectedVerdict(receipt, read);
        const id = `${o.prefix}-${task.id}-s${s}-a${attempt}`;
        const claim = claimOfBelief(verdict === "verified" ? true : verdict === "uncertain" ? null : false);
        const record = {
          operation_id: id,
          trajectory_id: `${o.prefix}-${task.id}`,
          agent: { name: o.agent },
          tool: { name: intent.tool },
          ...(premise ? { depends_on: [premise] } : {}),
          ...(previous ? { recovers: [previous] } : {}),
          ...(claim === "none" ? {} : { claimed_outcome: claim === "success" ? "success" : "failure" }),
          intent: { target: intent.key, effect: `${intent.tool} ${intent.key}`, fingerprint, params: intent.value },
          receipt: { status: receipt.status, receipt_id: receipt.receipt_id, observed_at: receiptAt, params: receipt.params, effects: receipt.effects, partial: receipt.partial, ...(receipt.tool ? { tool: receipt.tool } : {}) },
          canonical_read: reads.map((r) => ({ status: r.read.status, observed_at: r.at, ...(r.read.evidence ? { evidence: r.read.evidence } : {}), reader: { identity: "eval-reader" } })),
          idempotency: { enforced: true, key: id },
        };
        const answer = server ? must(`ingest ${id}`, await http("POST", "/api/v1/receipts", record), [201]) : { outcome: verdict };
        if (answer.outcome !== verdict) throw new Mismatch(`${id}: Reconcile classified it ${answer.outcome}, the environment's shapes say ${verdict}`);
        let review: Review = "none";
        let proceed = verdict === "verified";
        if (verdict === "divergent" || verdict === "uncertain") {
          // Escalated: a reviewer probes the environment and resolves it; the agent then obeys the retry gate.
          review = held ? "verified" : "not_applied";
          proceed = held;
          if (server) await resolve(id, review, intent.key);
        }
        log.push({
          id,
          kind: task.kind,
          trajectory: `${o.prefix}-${task.id}`,
          tool: intent.tool,
          fingerprint,
          order: log.length,
          claim,
          actual: held ? "held" : "not_held",
          accepted: receipt.status === "accepted",
          verdict,
          review,
          recovers: previous ? [previous] : [],
          sampled: verdict === "verified" && o.isSampled(id),
          ...(lies ? { lie: reads[reads.length - 1].lie } : {}),
        });
        previous = id;
        if (proceed) {
          done = true;
          premise = id;
        }
      }
      if (!done) break; // gives up the task: never builds on an unverified premise
    }
  }
  // The reviewer works through the audit samples left in the queue: each is probed and confirmed.
  if (!server) {
    // The same reviewer without the queue: each sample probed and confirmed, as below.
    for (const l of log.filter((x) => x.sampled)) {
      if (l.actual !== "held" && !o.lyingReaders) throw new Mismatch(`${l.id}: an audit sample whose effect did not hold (the environment's reads are faithful)`);
      l.review = l.actual === "held" ? "verified" : "not_applied";
    }
    return log;
  }
  const byId = new Map(log.map((l) => [l.id, l]));
  for (;;) {
    const page = must("review queue", await http("GET", `/api/v1/operations?needs_review=true&agent=${encodeURIComponent(o.agent)}&limit=200&order=oldest`), [200]);
    if (!page.items.length) break;
    for (const item of page.items as { operation_id: string; audit_sample: boolean; effective_outcome: string }[]) {
      const l = byId.get(item.operation_id);
      if (!l || !item.audit_sample || !l.sampled) throw new Mismatch(`${item.operation_id} is in the review queue, but the experiment expected only its audit samples there: ${JSON.stringify(item)}`);
      if (l.actual !== "held" && !o.lyingReaders) throw new Mismatch(`${item.operation_id}: an audit sample whose effect did not hold (the environment's reads are faithful)`);
      const held = l.actual === "held";
      const post = (body: unknown) => http("POST", `/api/v1/operations/${encodeURIComponent(l.id)}/corrections`, body);
      if (held) {
        must(`confirm ${l.id}`, await post({ action: "resolve", outcome: "verified", reason: "audit sample: probed the backend, the effect is there", evidence: { object_id: l.id }, expected_last_correction_id: null }), [201]);
      } else {
        // A verified audit sample found wrong is retracted (it is divergent then), and settled not applied.
        const retracted = must(`retract ${l.id}`, await post({ action: "retract", reason: "audit sample: probed the backend, the effect is not there (the reader lied)", expected_last_correction_id: null }), [201]);
        must(`resolve ${l.id}`, await post({ action: "resolve", outcome: "not_applied", reason: "probed the backend: the effect is not there", expected_last_correction_id: retracted.correction.id }), [201]);
      }
      l.review = held ? "verified" : "not_applied";
    }
  }
  const unconfirmed = log.filter((l) => l.sampled && l.review === "none");
  if (unconfirmed.length) throw new Mismatch(`${unconfirmed.length} operations the experiment expected as audit samples never reached the queue, e.g. ${unconfirmed[0].id}`);
  return log;
}

export { Mismatch };
