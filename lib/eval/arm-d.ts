import type { Review } from "@/lib/domain/metrics";
import type { Outcome } from "@/lib/domain/outcomes";
import { INDEX_LAG, Mismatch, type Http, type OpLog } from "./arms";
import { driveThroughGateway, duplicatesPrevented, opLogOf, operationOf, reviewAfterwards, type HeldBack } from "./arm-c";
import type { Task } from "./tasks";
import { World, type Read } from "./world";
import type { WorldCall } from "./world-mcp";
import { WorldReads, worldVerifiers } from "./world-reads";

/**
 * Protocol 2's arm D (issue 48 part 5): arm C's agent — arm A's, talking MCP, no line of code for
 * Reconcile — behind the same gateway, now **with** a verifier for each tool (Reconcile reads the
 * world itself, lib/eval/world-reads.ts) and `await_verdict`, so the gateway answers with the
 * verdict: a divergent call is `isError: true`, which the agent takes as a failure as any MCP
 * client does. It reads nothing else: not the text, not `_meta`.
 *
 * A reviewer is on duty, as arm B's is (lib/eval/arms.ts: "a reviewer probes the environment and
 * resolves it"): when the gateway answers a call divergent, before the agent's next call, an
 * operator probes the world and resolves the operation through Reconcile's API (not applied, or
 * verified when the effect is there). The gateway's retry gate then forwards the agent's ordinary
 * repeat as a new attempt `{id}~2` that recovers the old one (or replays "already done"). The
 * agent's code is arm C's, unchanged: it never hears of the reviewer.
 */

/** How long the gateway waits for the verifier's read. A read that comes later would change what the agent saw: the run checks none did. */
export const AWAIT_VERDICT = "2s";

export type ArmDOptions = {
  seed: number;
  tasks: Task[];
  /** Arm D's Reconcile (a server that lets verifiers read 127.0.0.1 over HTTP: RECONCILE_VERIFIER_ALLOW_HTTP, _ALLOW_PRIVATE). */
  base: string;
  /** The gateway's own token there (ingest, read). */
  gatewayToken: string;
  /** An admin's token there (verifiers), with review: the verifiers are saved with it, and the reviewer works with it after the run. */
  admin: Http;
  prefix: string;
  agent: string;
  world?: World;
  /**
   * After the run, resolve each uncertain and divergent operation the reviewer on duty left by
   * probing the world (off in the pass^k trials: it changes no world). The reviewer on duty works
   * in every run, trials included, as arm B's does.
   */
  review?: boolean;
};

export type ArmDResult = {
  log: OpLog[];
  world: World;
  heldBack: HeldBack[];
  prevented: number;
  calls: number;
  /** Verifier reads served, by what they found. */
  reads: Record<Read["status"] | "unknown", number>;
  /** The operations the reviewer on duty resolved during the run, in order, with its resolution. */
  onDuty: { id: string; outcome: OnDutyOutcome }[];
};

type OnDutyOutcome = Extract<Review, "verified" | "not_applied">;

/**
 * What the reviewer on duty does with an answer the gateway gave: an operation it answered
 * divergent (the agent saw `isError` and will repeat the call) is resolved by what the probe of
 * the world finds; anything else waits for the reviewer after the run, as in arm C — an
 * uncertain answer too (the wrapper's error after the write, or a read that could not be made):
 * its repeat is refused, as arm C's is.
 */
export function onDutyResolution(told: string | undefined, held: boolean): OnDutyOutcome | null {
  if (told !== "divergent") return null;
  return held ? "verified" : "not_applied";
}

/** The reviewer on duty: probes the world after each answer, resolves what onDutyResolution says, and checks Reconcile took it. */
export class ReviewerOnDuty {
  readonly resolved: ArmDResult["onDuty"] = [];
  constructor(
    private readonly http: Http,
    private readonly world: World,
    private readonly operationOf: (c: WorldCall) => string,
  ) {}

  readonly afterAnswer = async (c: WorldCall): Promise<void> => {
    const held = this.world.holds(c.intent);
    const outcome = onDutyResolution(c.told, held);
    if (!outcome) return;
    const id = this.operationOf(c);
    // Nothing ran between the call and the probe: what the reviewer finds is the ground truth the log keeps.
    if (held !== c.held) throw new Mismatch(`arm D: the reviewer on duty found ${id} ${held ? "held" : "not held"}, the log says ${c.held ? "held" : "not held"}`);
    const res = await this.http("POST", `/api/v1/operations/${encodeURIComponent(id)}/corrections`, {
      action: "resolve",
      outcome,
      reason: held ? "on duty: probed the backend, the effect is there" : "on duty: probed the backend, the effect is not there",
      ...(held ? { evidence: { object_id: c.intent.key } } : {}),
      expected_last_correction_id: null,
    });
    if (res.status !== 201) throw new Mismatch(`arm D: the reviewer on duty resolving ${id}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    const now = await this.http("GET", `/api/v1/operations/${encodeURIComponent(id)}`);
    if (now.status !== 200) throw new Mismatch(`arm D: read ${id}: HTTP ${now.status}`);
    const op = now.body as { effective_outcome?: string; retry?: { decision?: string } };
    if (op.effective_outcome !== outcome) throw new Mismatch(`arm D: ${id} resolved ${outcome} on duty, Reconcile says ${op.effective_outcome}`);
    if (outcome === "not_applied" && op.retry?.decision !== "a new operation may be issued") throw new Mismatch(`arm D: ${id}: after not_applied the retry gate says ${JSON.stringify(op.retry)}`);
    this.resolved.push({ id, outcome });
  };
}

/**
 * Where the reviewer on duty and the ground-truth log disagree: each of its resolutions must be
 * the log's review of that operation, and every call answered divergent must have been resolved.
 * Pure; empty when they agree.
 */
export function onDutyMismatches(calls: WorldCall[], log: OpLog[], onDuty: ArmDResult["onDuty"]): string[] {
  const byId = new Map(log.map((l) => [l.id, l]));
  const resolved = new Map(onDuty.map((r) => [r.id, r.outcome]));
  const out: string[] = [];
  if (resolved.size !== onDuty.length) out.push("an operation was resolved on duty twice");
  for (const [id, outcome] of resolved) {
    const l = byId.get(id);
    if (!l) out.push(`${id}: resolved on duty, but no call of it reached the tool`);
    else if (l.review !== outcome) out.push(`${id}: resolved ${outcome} on duty, the log's review is ${l.review}`);
  }
  calls.forEach((c, i) => {
    if (c.told === "divergent" && !resolved.has(log[i].id)) out.push(`${log[i].id}: answered divergent, not resolved on duty`);
  });
  return out;
}

/** Saves the world's verifiers in arm D's Reconcile (a new version only when one changed: the read service's port does). */
export async function saveVerifiers(admin: Http, readsBase: string): Promise<void> {
  for (const v of worldVerifiers(readsBase)) {
    const res = await admin("POST", "/api/v1/verifiers", v);
    if (res.status !== 201 && res.status !== 200) throw new Mismatch(`arm D: save verifier ${v.name}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
}

export async function runArmD(o: ArmDOptions): Promise<ArmDResult> {
  const world = o.world ?? new World(INDEX_LAG);
  const opId = operationOf(o.prefix);
  const reads = new WorldReads(o.seed, opId);
  const reviewer = new ReviewerOnDuty(o.admin, world, opId);
  const service = await reads.listen();
  let run: Awaited<ReturnType<typeof driveThroughGateway>>;
  try {
    await saveVerifiers(o.admin, service.base);
    run = await driveThroughGateway({ ...o, world, rule: { await_verdict: AWAIT_VERDICT }, onCall: reads.onCall, afterAnswer: reviewer.afterAnswer });
  } finally {
    await service.close();
  }
  // As arm C's log, with the verdict the verifier's read decides; the reviewer on duty settled the divergent ones, the reviewer after the run settles the rest.
  const log = opLogOf(run.calls, o.prefix, (c, id) => verdictOfD(c.answer, reads.read(id)?.status ?? null));
  // The run is a function of its seed only if every verdict the agent was given is the one its read decides.
  const late = run.calls.map((c, i) => ({ c, l: log[i] })).filter(({ c, l }) => c.answer === "accepted" && c.told !== l.verdict);
  if (late.length) {
    const { c, l } = late[0];
    throw new Mismatch(`arm D: ${late.length} answers did not carry the verdict the world's read decides, e.g. ${l.id}: told ${c.told}, the read says ${l.verdict} (a verifier read later than await_verdict ${AWAIT_VERDICT}: the machine was too slow for a deterministic run)`);
  }
  const disagree = onDutyMismatches(run.calls, log, reviewer.resolved);
  if (disagree.length) throw new Mismatch(`arm D: the reviewer on duty and the log disagree (${disagree.length}): ${disagree.slice(0, 3).join("; ")}`);
  if (o.review) await reviewAfterwards(o.admin, log, new Set(reviewer.resolved.map((r) => r.id)));
  const counts: ArmDResult["reads"] = { match: 0, absent: 0, mismatch: 0, unavailable: 0, unknown: 0 };
  for (const s of reads.seen) counts[s.status]++;
  return { log, world, heldBack: run.heldBack, prevented: duplicatesPrevented(run.heldBack), calls: run.agentCalls, reads: counts, onDuty: reviewer.resolved };
}

/** Reconcile's classification of a gateway record whose verifier read `read` (the gateway's receipt carries no params, partial flag or tool). */
export function verdictOfD(answer: WorldCall["answer"], read: Read["status"] | null): Outcome {
  if (answer === "error") return "uncertain"; // no receipt, so no read
  if (answer === "rejected") return read === "match" ? "divergent" : "rejected";
  return read === "match" ? "verified" : read === "absent" || read === "mismatch" ? "divergent" : "uncertain";
}
