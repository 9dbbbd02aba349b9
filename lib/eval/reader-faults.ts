import { htRecall } from "@/lib/domain/ht-recall";
import { isDrawn, metricFrom, type Metric, type Metrics } from "@/lib/domain/metrics";
import type { OpLog } from "./arms";
import { metricsOfLog, renderMarkdown, renderText } from "./report";
import { READER_FAULT_RATES, STALE_TICKS, type LyingWorld } from "./readers";

/**
 * Issue 37, part 2: what lying readers do to Metrics 3 and 4 as Reconcile computes them, against
 * the simulator's ground truth, and what audit sampling at several rates catches.
 */
export const AUDIT_RATES = [0.05, 0.1, 0.25] as const;
export const MARK_START = "<!-- reader-faults:start -->";
export const MARK_END = "<!-- reader-faults:end -->";

/**
 * The log as Reconcile can know it (metrics.ts actualOf): an operation nobody reviewed held when
 * verified, and did not when rejected — a stale read can hide a false failure behind a rejection.
 */
export function asReconcileKnowsIt(log: OpLog[]): OpLog[] {
  return log.map((l) => (l.review !== "none" ? l : l.verdict === "verified" ? { ...l, actual: "held" } : l.verdict === "rejected" ? { ...l, actual: "not_held" } : l));
}

/** Metric 3 from the ground truth: flagged (divergent) operations whose effect did not hold. */
export function truePrecision(log: OpLog[]): Metric {
  const flagged = log.filter((l) => l.verdict === "divergent");
  return metricFrom("verification_precision", flagged.filter((l) => l.actual === "not_held").length, flagged.length, 0, 0);
}

/** Metric 4 from the ground truth: of the calls whose effect did not hold (honest rejections aside), those flagged. */
export function trueRecall(log: OpLog[]): Metric {
  const failed = log.filter((l) => l.actual === "not_held" && l.verdict !== "rejected");
  return metricFrom("verification_recall", failed.filter((l) => l.verdict === "divergent").length, failed.length, 0, 0);
}

/** Arm B's log with its verified operations drawn as audit samples at `rate` (the server's draw) and reviewed. */
export function sampledAt(log: OpLog[], rate: number): OpLog[] {
  return log.map((l) => {
    if (l.verdict !== "verified") return l;
    const sampled = isDrawn(l.id, rate);
    return { ...l, sampled, review: sampled ? (l.actual === "held" ? "verified" : "not_applied") : "none" };
  });
}

export type RateRow = { rate: number; sampled: number; caught: number; hidden: number; product: Metrics; ht: ReturnType<typeof htRecall> };

export function atRate(log: OpLog[], rate: number): RateRow {
  const s = sampledAt(log, rate);
  const ht = htRecall(
    s
      .filter((l) => l.review !== "none")
      .map((l) => ({ flagged: l.verdict === "divergent", failed: l.review === "not_applied" || l.review === "retracted", probability: l.verdict === "verified" ? rate : 1 })),
  );
  return {
    rate,
    sampled: s.filter((l) => l.sampled).length,
    caught: s.filter((l) => l.sampled && l.actual === "not_held").length,
    hidden: log.filter((l) => l.verdict === "verified" && l.actual === "not_held").length,
    product: metricsOfLog(asReconcileKnowsIt(s), "B"),
    ht,
  };
}

const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);
const frac = (m: Metric) => `${pct(m.value)} (${m.hit}/${m.n})`;

/**
 * Issue 54: operations whose deciding read was an empty body (a match naming the object, its
 * fingerprint empty), by what the write did and what Reconcile said: a failed write read that way
 * is caught when it is not classified verified.
 */
export function emptyBodyOutcomes(log: OpLog[]): { failed: number; caught: number; verified: number; heldEscalated: number } {
  const empty = log.filter((l) => l.lie === "empty_body");
  const failed = empty.filter((l) => l.actual === "not_held");
  return {
    failed: failed.length,
    caught: failed.filter((l) => l.verdict !== "verified").length,
    verified: failed.filter((l) => l.verdict === "verified").length,
    heldEscalated: empty.filter((l) => l.actual === "held" && l.verdict === "uncertain").length,
  };
}

export type ReaderFaultReport = { rows: RateRow[]; precision: Metric; recall: Metric; lies: Record<string, number>; verifiedNotHeld: number; emptyBody: ReturnType<typeof emptyBodyOutcomes>; text: string; markdown: string };

/** The section: the lies told, Metrics 3 and 4 (Reconcile vs truth), and sampling at 5, 10 and 25 %. */
export function readerFaultReport(r: { log: OpLog[]; world: LyingWorld; baseline: Metrics; command: string; runRate: number; product: Metrics; checkMismatches: number }): ReaderFaultReport {
  const rows = AUDIT_RATES.map((rate) => atRate(r.log, rate));
  const precision = truePrecision(r.log);
  const recall = trueRecall(r.log);
  const lies: Record<string, number> = { stale: 0, empty_body: 0, cache: 0 };
  for (const l of r.world.lies) lies[l.fault]++;
  const verifiedNotHeld = rows[0].hidden;
  const metricRows = [
    ["Metric", "Without lies (same seed, truth = Reconcile)", "Reconcile (GET /api/v1/metrics)", "Ground truth (simulator)"],
    ["3. Verification precision", frac(r.baseline.verification_precision), frac(r.product.verification_precision), frac(precision)],
    ["4. Verification recall", frac(r.baseline.verification_recall), frac(r.product.verification_recall), frac(recall)],
  ];
  const rateRows = [
    ["Audit rate", "verified ops sampled", "lies caught (of hidden)", "Metric 4, Reconcile", "Metric 4, HT-weighted (1/rate)", "est. missed ± s.e.", "Metric 4, truth"],
    ...rows.map((x) => [
      `${(x.rate * 100).toFixed(0)} %`,
      String(x.sampled),
      `${x.caught} of ${x.hidden}`,
      frac(x.product.verification_recall),
      pct(x.ht.value),
      `${x.ht.missed.toFixed(0)} ± ${x.ht.missedStdError.toFixed(0)}`,
      frac(recall),
    ]),
  ];
  const count = (f: (l: LyingWorld["lies"][number]) => boolean) => r.world.lies.filter(f).length;
  const toMatch = (fault: string) => count((l) => l.fault === fault && l.status === "match" && l.truth !== "match");
  const falseAlarm = (fault: string) => count((l) => l.fault === fault && l.truth === "match" && l.status !== "match");
  const liesLine =
    `Reader lies that changed what the agent saw: stale ${lies.stale}, empty body ${lies.empty_body}, cache ${lies.cache}. ` +
    `A failed write read as a match: empty body ${toMatch("empty_body")}, cache ${toMatch("cache")}, stale ${toMatch("stale")} ` +
    `(some of them rejected or partial receipts, divergent all the same); a write in place read as absent or different: stale ${falseAlarm("stale")}. ` +
    `${verifiedNotHeld} operations were classified verified whose effect did not hold.`;
  const eb = emptyBodyOutcomes(r.log);
  const emptyLine =
    `Empty bodies deciding a failed write: ${eb.failed}, caught ${eb.caught} (not verified: uncertain and escalated, or divergent on a rejected or partial receipt), verified ${eb.verified}. ` +
    `Empty bodies deciding a write that held, escalated as uncertain for a reviewer to confirm: ${eb.heldEscalated}.`;
  const text = ["Readers that lie (--reader-faults):", liesLine, emptyLine, "", renderText(metricRows), "", renderText(rateRows)].join("\n");
  const markdown = `${MARK_START}
## Readers that lie (\`--reader-faults\`)

Written by \`${r.command}\` (lib/eval/readers.ts, lib/eval/reader-faults.ts); the run above is
without them. Arm B's canonical read-back goes through readers that lie, each read drawing at most
one fault, deterministically from the seed: a **stale replica** (${pct(READER_FAULT_RATES.stale)} of reads; for ${STALE_TICKS}
ticks after a write it returns the state before it), a reader that answers **200 with an empty
body** (${pct(READER_FAULT_RATES.empty_body)}; the agent's adapter reports a match naming the object, its fingerprint empty), and
a **cache** that returns the intended value whether or not it was written (${pct(READER_FAULT_RATES.cache)}; a match with
the intended fingerprint). Reviewers and the ground truth probe the primary, which does not lie.

${liesLine}

${emptyLine}

${renderMarkdown(metricRows)}

Reconcile's figures are checked against the records it was sent (a verified operation nobody
reviewed counts as held, which is all it can know; the check ${r.checkMismatches ? `**FAILED** in ${r.checkMismatches} counts` : "passed"}).
Metric 3 stays true, because every flagged operation goes to a reviewer, who probes the primary.
It still falls against the run without lies, because the stale replica's false absents are
escalated and the reviewer finds the effect there. Metric 4
is where the lies hide: a failure classified verified reaches a reviewer only as an audit sample,
so Reconcile counts ${(r.runRate * 100).toFixed(0)} % of them, and its recall is biased upwards. What audit sampling catches, and
the Horvitz–Thompson estimate (lib/domain/ht-recall.ts: each failure an audit sample found weighs
1/rate, escalated ones 1), computed from the same run with the server's deterministic draw:

${renderMarkdown(rateRows)}

The empty body is the lie Reconcile refuses outright (issue 54): the intent names a fingerprint,
so a match whose evidence names the object without one is uncertain, "the read found the object
but did not show its content to compare" (lib/domain/classify.ts), and goes to a reviewer. It is
not *flagged* in the paper's sense (Metric 4 counts divergent verdicts only), so recall does not
rise with it; what changes is that no such failure hides among the verified. The cache's lie carries
the intended fingerprint, so only a probe of the primary (an audit sample) can find it. A stale
read that says absent also hides a false failure behind a rejection: Reconcile then counts it not
applied (grounding and silent failures move with it; the check above reads the records that way).
${MARK_END}
`;
  return { rows, precision, recall, lies, verifiedNotHeld, emptyBody: eb, text, markdown };
}

/** Puts the section into a document, replacing an earlier one, before "## Method" (or at the end). */
export function withSection(doc: string, section: string): string {
  const a = doc.indexOf(MARK_START);
  const b = doc.indexOf(MARK_END);
  if (a >= 0 && b > a) return doc.slice(0, a) + section.trimEnd() + doc.slice(b + MARK_END.length);
  const m = doc.indexOf("## Method");
  return m >= 0 ? doc.slice(0, m) + section + "\n" + doc.slice(m) : doc + "\n" + section;
}

/** The section of a document, if it has one (kept when a run without reader faults rewrites it). */
export function sectionOf(doc: string): string | null {
  const a = doc.indexOf(MARK_START);
  const b = doc.indexOf(MARK_END);
  return a >= 0 && b > a ? doc.slice(a, b + MARK_END.length) + "\n" : null;
}
