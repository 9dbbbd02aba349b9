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
  /** After the run, resolve each uncertain and divergent operation by probing the world (off in the pass^k trials). */
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
};

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
  const service = await reads.listen();
  let run: Awaited<ReturnType<typeof driveThroughGateway>>;
  try {
    await saveVerifiers(o.admin, service.base);
    run = await driveThroughGateway({ ...o, world, rule: { await_verdict: AWAIT_VERDICT }, onCall: reads.onCall });
  } finally {
    await service.close();
  }
  // As arm C's log, with the verdict the verifier's read decides; the reviewer after the run settles the uncertain and divergent ones.
  const log = opLogOf(run.calls, o.prefix, (c, id) => verdictOfD(c.answer, reads.read(id)?.status ?? null));
  // The run is a function of its seed only if every verdict the agent was given is the one its read decides.
  const late = run.calls.map((c, i) => ({ c, l: log[i] })).filter(({ c, l }) => c.answer === "accepted" && c.told !== l.verdict);
  if (late.length) {
    const { c, l } = late[0];
    throw new Mismatch(`arm D: ${late.length} answers did not carry the verdict the world's read decides, e.g. ${l.id}: told ${c.told}, the read says ${l.verdict} (a verifier read later than await_verdict ${AWAIT_VERDICT}: the machine was too slow for a deterministic run)`);
  }
  if (o.review) await reviewAfterwards(o.admin, log);
  const counts: ArmDResult["reads"] = { match: 0, absent: 0, mismatch: 0, unavailable: 0, unknown: 0 };
  for (const s of reads.seen) counts[s.status]++;
  return { log, world, heldBack: run.heldBack, prevented: duplicatesPrevented(run.heldBack), calls: run.agentCalls, reads: counts };
}

/** Reconcile's classification of a gateway record whose verifier read `read` (the gateway's receipt carries no params, partial flag or tool). */
export function verdictOfD(answer: WorldCall["answer"], read: Read["status"] | null): Outcome {
  if (answer === "error") return "uncertain"; // no receipt, so no read
  if (answer === "rejected") return read === "match" ? "divergent" : "rejected";
  return read === "match" ? "verified" : read === "absent" || read === "mismatch" ? "divergent" : "uncertain";
}
