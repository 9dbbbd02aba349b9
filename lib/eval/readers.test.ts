import { describe, expect, it } from "vitest";
import { expectedVerdict, runArmB, type OpLog } from "./arms";
import { asReconcileKnowsIt, atRate, emptyBodyOutcomes, sampledAt, sectionOf, trueRecall, withSection, MARK_END, MARK_START } from "./reader-faults";
import { makeTasks } from "./tasks";
import { LyingWorld, READER_FAULT_RATES } from "./readers";
import { World, type Intent } from "./world";

const intent = (key: string): Intent => ({ tool: "env.users.create", key, value: { task: key, amount: 5 } });

describe("readers that lie (lib/eval/readers.ts)", () => {
  it("the cache answers the intended value for a write that never happened; the primary does not lie", () => {
    const w = new LyingWorld(2, 1);
    let cached = 0;
    for (let i = 0; i < 400; i++) {
      const it = intent(`t${i}-s0`);
      w.call(it, "no_effect");
      const r = w.read(it, false);
      expect(w.holds(it)).toBe(false);
      if (r.status === "match") cached++;
    }
    // About (cache + empty body) of the reads of a missing effect come back as a match.
    const share = cached / 400;
    expect(share).toBeGreaterThan((READER_FAULT_RATES.cache + READER_FAULT_RATES.empty_body) / 2);
    expect(share).toBeLessThan((READER_FAULT_RATES.cache + READER_FAULT_RATES.empty_body) * 2);
    expect(w.lies.every((l) => l.fault !== "stale" || l.status !== "match")).toBe(true);
  });
  it("the stale replica returns the state before the last write, only for a while", () => {
    const w = new LyingWorld(0, 1);
    const plain = new World(0);
    const seen: string[] = [];
    for (let i = 0; i < 300; i++) {
      const it = intent(`t${i}-s0`);
      w.call(it, "none");
      plain.call(it, "none");
      const r = w.read(it, false);
      if (r.status !== plain.read(it, false).status) seen.push(`${w.lies.at(-1)!.fault}:${r.status}`);
    }
    expect(seen.filter((s) => s === "stale:absent").length).toBeGreaterThan(10);
    const late = new LyingWorld(0, 1);
    const it = intent("x-s0");
    late.call(it, "none");
    late.now += 100;
    for (let i = 0; i < 50; i++) expect(late.read(it, false).status).toBe("match");
  });
  it("is a function of its seed", () => {
    const run = (seed: number) => {
      const w = new LyingWorld(2, seed);
      return [...Array(200)].map((_, i) => (w.call(intent(`t${i}-s0`), i % 3 ? "none" : "no_effect"), w.read(intent(`t${i}-s0`), false).status)).join();
    };
    expect(run(4)).toBe(run(4));
    expect(run(4)).not.toBe(run(5));
  });
});

const op = (id: string, verdict: OpLog["verdict"], actual: OpLog["actual"], review: OpLog["review"] = "none"): OpLog => ({
  id, kind: "simple", trajectory: id, tool: "env.users.create", fingerprint: "f", order: 0, claim: verdict === "verified" ? "success" : "other", actual, accepted: true, verdict, review, recovers: [], sampled: false,
});

describe("reader-fault report (lib/eval/reader-faults.ts)", () => {
  const log = [
    op("a", "divergent", "not_held", "not_applied"),
    op("b", "divergent", "held", "verified"),
    ...[...Array(40)].map((_, i) => op(`v${i}`, "verified", i < 8 ? "not_held" : "held")),
    op("r", "rejected", "held"),
  ];
  it("Reconcile knows an unreviewed verified operation as held, an unreviewed rejection as not held", () => {
    const k = asReconcileKnowsIt(log);
    expect(k.filter((l) => l.verdict === "verified").every((l) => l.actual === "held")).toBe(true);
    expect(k.find((l) => l.id === "r")!.actual).toBe("not_held");
    expect(k.find((l) => l.id === "a")!.actual).toBe("not_held");
  });
  it("the truth's Metric 4 counts the failures verification called verified", () => {
    expect(trueRecall(log)).toMatchObject({ hit: 1, n: 9 });
  });
  it("at rate 1 every lie is caught and the plain and weighted recall are the truth", () => {
    const row = atRate(log, 1);
    expect(row).toMatchObject({ sampled: 40, caught: 8, hidden: 8 });
    expect(row.product.verification_recall).toMatchObject({ hit: 1, n: 9 });
    expect(row.ht.value).toBeCloseTo(1 / 9);
  });
  it("at a lower rate the samples are the server's draw, and each caught lie weighs 1/rate", () => {
    const s = sampledAt(log, 0.25);
    const row = atRate(log, 0.25);
    expect(row.sampled).toBe(s.filter((l) => l.sampled).length);
    expect(row.ht.missed).toBeCloseTo(row.caught / 0.25);
    expect(row.product.verification_recall.n).toBe(1 + row.caught);
  });
  it("the section replaces its earlier self and survives a rewrite of the document", () => {
    const doc = "# E\n\n## Result\n\n## Method\n\nm\n";
    const one = withSection(doc, `${MARK_START}\n## Readers\n1\n${MARK_END}\n`);
    expect(one.indexOf("## Readers")).toBeLessThan(one.indexOf("## Method"));
    const two = withSection(one, `${MARK_START}\n## Readers\n2\n${MARK_END}\n`);
    expect(two).toContain("2\n");
    expect(two).not.toContain("\n1\n");
    expect(withSection(doc, sectionOf(two)!)).toBe(two);
  });
});

describe("the empty body (issue 54)", () => {
  it("an accepted write read as a match without a fingerprint is uncertain; with one verified; partial or rejected divergent", () => {
    const accepted = { status: "accepted", receipt_id: "r", params: {}, effects: [], partial: false } as unknown as Parameters<typeof expectedVerdict>[0];
    const empty = { status: "match" as const, evidence: { object_id: "o", fingerprint: "" } };
    expect(expectedVerdict(accepted, empty)).toBe("uncertain");
    expect(expectedVerdict(accepted, { status: "match", evidence: { object_id: "o", fingerprint: "sha256:x" } })).toBe("verified");
    expect(expectedVerdict({ ...accepted, partial: true }, empty)).toBe("divergent");
    expect(expectedVerdict({ ...accepted, status: "rejected" }, empty)).toBe("divergent");
  });
  it("arm B with lying readers: no failed write an empty body decided is verified, and each is counted", async () => {
    const log = await runArmB({ seed: 1, tasks: makeTasks(1, 300), prefix: "t", agent: "a", startMs: 0, tickMs: 1000, isSampled: () => false, world: new LyingWorld(2, 1), lyingReaders: true });
    const eb = emptyBodyOutcomes(log);
    expect(eb.failed).toBeGreaterThan(0);
    expect([eb.caught, eb.verified]).toEqual([eb.failed, 0]);
    expect(log.filter((l) => l.lie === "empty_body").every((l) => l.verdict !== "verified")).toBe(true);
  });
});
