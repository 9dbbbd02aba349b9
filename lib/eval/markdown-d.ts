import { METRIC_NAMES, METRIC_TITLES, type Metric, type Metrics } from "@/lib/domain/metrics";
import type { OpLog } from "./arms";
import { AWAIT_VERDICT } from "./arm-d";
import { renderMarkdown, shareOfGain, undetectedSilentFailures } from "./report";
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
  return `
## Arm D: the same agent behind the gateway, with verifiers

Arm C's agent, unchanged — arm A's policy read off MCP, no line of code for Reconcile — behind
the same gateway, now with a verifier for each of the world's tools and \`"await_verdict":
"${AWAIT_VERDICT}"\` in their rule (lib/eval/arm-d.ts). Reconcile reads the world itself after
each receipt and the gateway answers with its verdict: verified, the tool's result and a line
\`Reconcile: verified (…)\`; divergent, \`isError: true\`; still uncertain when the wait ends, the
tool's result and \`Reconcile: not verified yet (…)\`. **The agent reads only \`isError\`**, as any
MCP client does: not the \`Reconcile:\` lines, not \`_meta["reconcile/outcome"]\`. A divergent
answer is a failure to it, so it sends the call again (same request id), the gateway refuses the
repeat until a reviewer acts, and after ${3} attempts the agent gives the task up.

${renderMarkdown(rows)}

Arms A–C as in the tables above; intervals (arm D) are 95 % Wilson score intervals. **Check:** ${
    d.mismatches.length
      ? `**FAILED**: Reconcile's metrics for arm D differ from the ground truth: ${d.mismatches.map((x) => `${x.metric}.${x.field} ${x.product} ≠ ${x.truth}`).join("; ")}.`
      : `passed — the metrics Reconcile computed from the gateway's records of arm D, its verifiers' reads and the reviewer's resolutions after the run (\`GET /api/v1/metrics?agent=${d.agent}\`) equal the ground truth in every count, claims aside (the gateway records none).`
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
leaves out of the agent. Recovery (Metric 5) is where D is far below B (${pct(d.metrics.recovery_rate.value)} against
${pct(m.B.recovery_rate.value)}): a divergent call is a failure the agent sees, but its repeat is refused until a
reviewer acts, and nobody reviews during the run, so after ${3} attempts the task is given up
where arm B's reviewer settles the call and its agent tries again (pass^k below says the same).
Duplicates prevented: the repeats that would have applied an effect twice are the false
failures' (the wrapper's error after the write), refused as in arm C; a divergent call's effect is
not in place, so its refused repeats prevent no duplicate (they prevent the retry instead).

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
unavailable leaves the operation uncertain, so the gateway waits the whole ${AWAIT_VERDICT} for it (the
server's long poll ends only on a decisive outcome): most of arm D's run time.

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
resolves each uncertain and divergent operation by probing the world, as for arm C. The CI test
(lib/eval/eval.itest.ts) runs arm D on 20 tasks (seed 7) twice on a server of its own: the check
passes, and the second run gives the same figures.
`;
}
