import { METRIC_NAMES, METRIC_TITLES, metricPart, type Metric, type Metrics } from "@/lib/domain/metrics";
import type { OpLog } from "./arms";
import { AWAIT_VERDICT } from "./arm-d";
import { MAX_ATTEMPTS } from "./arms";
import { factsOfLog, renderMarkdown, shareOfGain, undetectedSilentFailures } from "./report";
import type { ArmDReport } from "./run";
import { READ_AFTER_TICKS } from "./world-reads";

/** docs/EVALUATION.md's section on arm D (issue 48 part 5), beside arms A, B and C. */
const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);
const ci = (m: Metric) => (m.interval ? ` [${pct(m.interval.low)}, ${pct(m.interval.high)}]` : "");
const pts = (x: number | null, y: number | null) => (x === null || y === null ? "—" : `${y - x >= 0 ? "+" : ""}${((y - x) * 100).toFixed(1)} pts`);

/** The issue's three targets for arm D, each measured. */
export function armDTargets(d: ArmDReport, b: Metrics, preventedC: number) {
  const grounding = d.metrics.grounding_accuracy.value;
  const gap = grounding === null || b.grounding_accuracy.value === null ? null : grounding - b.grounding_accuracy.value;
  const believed = undetectedSilentFailures(d.log);
  return [
    { target: "Grounding within 2 points of B's", measured: `${pct(grounding)} against ${pct(b.grounding_accuracy.value)} (${pts(b.grounding_accuracy.value, grounding)})`, met: gap !== null && Math.abs(gap) <= 0.02 },
    { target: "Silent failures believed by the agent ≤ 1 %", measured: `${pct(believed.value)} (${believed.hit} of ${believed.n} accepted calls)`, met: believed.value !== null && believed.value <= 0.01 },
    { target: "Duplicates prevented ≥ C's", measured: `${d.prevented} against ${preventedC}`, met: d.prevented >= preventedC },
  ];
}

export function armDMarkdown(d: ArmDReport, m: { A: Metrics; B: Metrics; C: Metrics }, logs: { A: OpLog[]; B: OpLog[]; C: OpLog[] }, preventedC: number): string {
  const believed = { A: undetectedSilentFailures(logs.A), B: undetectedSilentFailures(logs.B), C: undetectedSilentFailures(logs.C), D: undetectedSilentFailures(d.log) };
  const rows = [["Metric", "Arm A", "Arm B", "Arm C", "Arm D: the gateway with verifiers", "n (D)", "Δ (D − A)", "D's share of B's gain"]];
  for (const name of METRIC_NAMES) {
    const t = METRIC_TITLES[name];
    const gain = name === "grounding_accuracy" || name === "verification_recall";
    rows.push([`${t.number}. ${t.title}`, pct(m.A[name].value), pct(m.B[name].value), pct(m.C[name].value), `${pct(d.metrics[name].value)}${ci(d.metrics[name])}`, String(d.metrics[name].n), pts(m.A[name].value, d.metrics[name].value), gain ? shareOfGain(m.A[name], m.B[name], d.metrics[name]) : "—"]);
    if (name === "silent_failure_rate") {
      rows.push(["2′. … of them believed by the agent", pct(believed.A.value), pct(believed.B.value), pct(believed.C.value), `${pct(believed.D.value)}${ci(believed.D)}`, String(believed.D.n), pts(believed.A.value, believed.D.value), shareOfGain(believed.A, believed.B, believed.D)]);
    }
  }
  const targets = armDTargets(d, m.B, preventedC);
  const refused = d.heldBack.filter((h) => h.answer === "refused").length;
  const byVerdict = (v: string) => d.log.filter((l) => l.verdict === v).length;
  const believedUncertain = d.log.filter((l) => l.accepted && l.actual === "not_held" && l.claim === "success" && l.verdict === "uncertain").length;
  const divergentHeld = d.log.filter((l) => l.verdict === "divergent" && l.actual === "held").length;
  const verifiedNotHeld = d.log.filter((l) => l.verdict === "verified" && l.actual === "not_held").length;
  const onDutyBy = (o: string) => d.onDuty.filter((r) => r.outcome === o).length;
  const afterwards = d.log.filter((l) => l.review !== "none").length - d.onDuty.length;
  const recovery = recoveryOf(d.log);
  const recoveryB = recoveryOf(logs.B);
  return `
## Arm D: the same agent behind the gateway, with verifiers

Arm C's agent, unchanged — arm A's policy read off MCP, no line of code for Reconcile — behind
the same gateway, now with a verifier for each of the world's tools and \`"await_verdict":
"${AWAIT_VERDICT}"\` in their rule (lib/eval/arm-d.ts). Reconcile reads the world itself after
each receipt and the gateway answers with its verdict: verified, the tool's result and a line
\`Reconcile: verified (…)\`; divergent, \`isError: true\`; still uncertain when the wait ends, the
tool's result and \`Reconcile: not verified yet (…)\`. **The agent reads only \`isError\`**, as any
MCP client does: not the \`Reconcile:\` lines, not \`_meta["reconcile/outcome"]\`. A divergent
answer is a failure to it, so it sends the call again (same request id); after ${MAX_ATTEMPTS} attempts it
gives the task up.

**A reviewer is on duty, as in arm B.** When the gateway answers a call divergent, before the
agent's next call an operator (harness code, with an admin's token that has \`review\`) probes
the world and resolves the operation through Reconcile's API (\`POST
/api/v1/operations/{id}/corrections\`): not applied when the effect is not there, verified (with
evidence) when it is. The gateway's retry gate then does what it does for such an operation: the
agent's ordinary repeat of a call resolved not applied is forwarded as a new attempt
\`{id}~2\` that recovers the old one (verified: replayed as "already done"). The agent's code
is arm C's, unchanged; it never hears of the reviewer. An *uncertain* answer waits for the
reviewer after the run, as in arm C: the wrapper's error after the write (\`isError\`, its fate
unknown) has its repeats refused, and a read that could not be made answers \`not verified yet\`,
which is not \`isError\`. The reviewer on duty resolved ${d.onDuty.length} operations during the run (not applied
${onDutyBy("not_applied")}, verified ${onDutyBy("verified")}); the reviewer after the run resolved the ${afterwards} uncertain and divergent ones left.

${renderMarkdown(rows)}

Arms A–C as in the tables above; intervals (arm D) are 95 % Wilson score intervals. **Check:** ${
    d.mismatches.length
      ? `**FAILED**: Reconcile's metrics for arm D differ from the ground truth: ${d.mismatches.map((x) => `${x.metric}.${x.field} ${x.product} ≠ ${x.truth}`).join("; ")}.`
      : `passed — the metrics Reconcile computed from the gateway's records of arm D, its verifiers' reads and the reviewers' resolutions (on duty and after the run) (\`GET /api/v1/metrics?agent=${d.agent}\`) equal the ground truth in every count, claims aside (the gateway records none).`
  }

| Target (issue 48) | Arm D | Met |
|---|---|---|
${targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`).join("\n")}

|  | Arm A | Arm B | Arm C | Arm D |
|---|---|---|---|---|
| Repeats the gateway held back (refused / replayed) | — | — | (above) | ${d.heldBack.length} (${refused} / ${d.heldBack.length - refused}) |
| **Duplicates prevented** | — | — | ${preventedC} | **${d.prevented}** |
| Effects applied again while wholly in place (each arm's world) | ${d.duplicates.A} | ${d.duplicates.B} | ${d.duplicates.C} | ${d.duplicates.D} |

Verdicts of arm D's ${d.log.length} recorded calls: verified ${byVerdict("verified")}, divergent ${byVerdict("divergent")},
uncertain ${byVerdict("uncertain")}, rejected ${byVerdict("rejected")}; the verifiers' reads found match ${d.reads.match}, absent
${d.reads.absent}, mismatch ${d.reads.mismatch}, unavailable ${d.reads.unavailable}. Verified but not in place: ${verifiedNotHeld}; divergent
but in place: ${divergentHeld} (the world's reads are faithful, and the window covers the index's lag).

**Where D differs from B, measured.** Grounding: ${pct(d.metrics.grounding_accuracy.value)} against B's
${pct(m.B.grounding_accuracy.value)} (${pts(m.B.grounding_accuracy.value, d.metrics.grounding_accuracy.value)}). Arm B's misses are mostly false alarms its agent believed — a read-back
made before the index's lag had passed says absent (B's precision ${pct(m.B.verification_precision.value)}) — where arm D's verifier
window covers the lag (precision ${pct(d.metrics.verification_precision.value)}). Every silent failure arm D's agent believed
(${believed.D.hit}) is an answer \`Reconcile: not verified yet\` (${believedUncertain} of them): the verifier's read
was unavailable (the category-5 draw, 4 % of calls, which may hide any other fault), the
operation stayed uncertain, and an uncertain answer is not \`isError\`, so the agent — reading
\`isError\` only — built on it. Arm B's agent treats *uncertain* as "do not build on it" and
escalates it; here that would take reading the \`Reconcile:\` line or \`_meta\`, which the issue
leaves out of the agent. Recovery (Metric 5): ${pct(d.metrics.recovery_rate.value)} against B's ${pct(m.B.recovery_rate.value)}
(${pts(m.B.recovery_rate.value, d.metrics.recovery_rate.value)}). In both, a detected failure (divergent, or a rejection) is followed by a new attempt that
names it in \`recovers\`, and it is recovered when that attempt ends verified. Of D's ${recovery.n} detected failures, ${recovery.hit} were recovered, ${recovery.nextFailed}
were followed by an attempt that did not recover them (at ${recovery.stepVerifiedLater} of them a later attempt at the step did end
verified), ${recovery.inPlace} had their effect in place and no attempt
after them (a false alarm: nothing to recover, yet Metric 5 counts it unrecovered), and ${recovery.noNext} were
the agent's last attempt at a step. Arm B: ${recoveryB.hit} of ${recoveryB.n} recovered, ${recoveryB.nextFailed} followed by an
attempt that did not, ${recoveryB.inPlace} false alarms, ${recoveryB.noNext} last attempts. One difference is in
the records: the gateway records no intent fingerprint, so a recovery of D's must be named in
\`recovers\`, which names the attempt before (a third attempt that succeeds recovers the second,
not the first); arm B's records carry the fingerprint, and a later verified attempt at the same
step, in the same trajectory, recovers every earlier one (DOMAIN.md, Metric 5). Counted that way,
D's ${recovery.stepVerifiedLater} would be recovered too: ${pct(recovery.n ? (recovery.hit + recovery.stepVerifiedLater) / recovery.n : null)} (${recovery.hit + recovery.stepVerifiedLater} of ${recovery.n}).
Duplicates prevented: ${d.prevented} against C's ${preventedC}. The repeats that would have applied an effect twice are
the false failures' (the wrapper's error after the write), refused as in arm C. A divergent
call's effect is not in place, so its repeat prevents no duplicate; with the reviewer on duty it
goes through as \`{id}~2\`, and the agent carries on to later steps where arm C's went on too
(C believed the divergent call), meeting their false failures as C does, and to the attempts
after a divergent one, which C never made.

**How the world answers the verifiers, and why the run stays a function of its seed.** A
verifier is an HTTP read Reconcile's job worker makes on wall-clock time; the world's clock is a
tick counter. So the world serves a read service on 127.0.0.1 (lib/eval/world-reads.ts), read by
one verifier per tool at \`GET /reads/{operation_id}\` (503 → unavailable, 404 → absent, 200 →
match when \`/data/value\` equals \`{intent.params.value}\`, with the object id and its fingerprint
as evidence, else mismatch), with one check at \`0s\` that is also the window's end, so the first
read decides and \`await_verdict\` has it at once. It answers **as of the operation's logical
step**: the world is snapshotted when the tool runs the call (under the operation id the gateway
gives it: the request id, \`~2\` and \`~3\` for attempts forwarded again), and the index's lag is
judged ${READ_AFTER_TICKS} ticks after the call (the lag: the verifier's window covers it). The world's clock
never moves for a read. A read that comes late — a rejected call's check, which the gateway does
not wait for, may come after later calls — still sees the world as the call left it, and however
many reads come, and whenever, they change nothing. The one thing wall time could still change
is what the agent is told: a read later than \`await_verdict\` would turn a verdict into "not
verified yet". The run checks that every accepted call's answer carried the verdict its read
decides (\`_meta\`, read by the evaluator, not the agent) and fails otherwise. The read that is
unavailable leaves the operation uncertain; the server's long poll ends as soon as the
verifier's last check is made (its window closed: nothing more will decide it), so the gateway
answers \`not verified yet\` at once rather than after ${AWAIT_VERDICT}.

\`\`\`json
{ "reconcile": { "url": "<arm D's Reconcile>", "token_env": "RECONCILE_EVAL_GATEWAY_TOKEN" },
  "listen": { "http": { "port": 0 } }, "upstreams": { "world": { "url": "http://127.0.0.1:<port>/mcp" } },
  "tools": { "env.*": { "operation_id_from": "/request_id", "receipt_id_from": "/receipt_id", "await_verdict": "${AWAIT_VERDICT}" } },
  "journal_dir": null }
\`\`\`

Arm D records to a Reconcile project of its own (\`npm run eval\` makes it on the same server,
started with \`RECONCILE_VERIFIER_ALLOW_HTTP=1\` and \`RECONCILE_VERIFIER_ALLOW_PRIVATE=1\` so that
verifiers may read 127.0.0.1): verifiers are per tool, and arms B and C, recording the same tool
names, must not be read by them. That project draws no audit samples. After the run a reviewer
resolves each uncertain and divergent operation the reviewer on duty left, by probing the world,
as for arm C. The pass^k trials of arm D go through the gateway and Reconcile with the reviewer
on duty, as arm B's trials have theirs (the reviewer after the run changes no world: it is left
out of them, as it is of arm C's). The CI test (lib/eval/eval.itest.ts) runs arm D on 20 tasks
(seed 7) twice on a server of its own: the check passes, every divergent answer was resolved on
duty, a divergent step was recovered by its forwarded \`~2\` attempt, no repeat of a divergent
call was refused, and the second run gives the same figures.
`;
}

/**
 * Metric 5's detected failures (divergent, rejected) of a log, and what became of each: recovered;
 * followed by an attempt that names it in `recovers` but did not recover it (stepVerifiedLater:
 * of those, the ones a later attempt down the chain did end verified); not followed, its
 * effect in place all along (a false alarm: the agent went on, nothing to recover); or not
 * followed, its effect not in place (the agent's last attempt).
 */
export function recoveryOf(log: OpLog[]): { n: number; hit: number; nextFailed: number; stepVerifiedLater: number; inPlace: number; noNext: number } {
  const facts = factsOfLog(log, "B");
  const next = new Map(log.flatMap((l) => l.recovers.map((r) => [r, l] as const)));
  const verified = (l: OpLog) => l.review === "verified" || (l.review === "none" && l.verdict === "verified");
  const out = { n: 0, hit: 0, nextFailed: 0, stepVerifiedLater: 0, inPlace: 0, noNext: 0 };
  for (const l of log) {
    const part = metricPart("recovery_rate", facts.get(l.id)!);
    if (part === null) continue;
    out.n++;
    if (part === "hit") out.hit++;
    else if (next.has(l.id)) {
      out.nextFailed++;
      // A later attempt down the chain ended verified: the step was done, but not by the attempt that names this one.
      for (let later = next.get(l.id); later; later = next.get(later.id)) {
        if (verified(later)) {
          out.stepVerifiedLater++;
          break;
        }
      }
    }
    else if (l.actual === "held") out.inPlace++;
    else out.noNext++;
  }
  return out;
}
