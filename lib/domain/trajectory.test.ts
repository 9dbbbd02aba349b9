import { describe, expect, it } from "vitest";
import { analyzeTrajectory } from "./trajectory";

describe("analyzeTrajectory (Proposition 1)", () => {
  it("finds the first unverified step later steps relied on, and everything it tainted", () => {
    const a = analyzeTrajectory([
      { id: "create", outcome: "divergent", depends_on: [] },
      { id: "generate", outcome: "verified", depends_on: ["create"] },
      { id: "upload", outcome: "uncertain", depends_on: ["generate"] },
      { id: "notify", outcome: "verified", depends_on: ["upload"] },
      { id: "unrelated", outcome: "verified", depends_on: [] },
    ]);
    expect(a.first_unverified_premise).toBe("create");
    expect(a.tainted).toEqual(["generate", "upload", "notify"]);
    expect(a.tainted_by.notify.sort()).toEqual(["create", "upload"]);
  });
  it("a trajectory whose unverified step nobody relied on has no broken premise", () => {
    const a = analyzeTrajectory([
      { id: "a", outcome: "verified", depends_on: [] },
      { id: "b", outcome: "divergent", depends_on: ["a"] },
    ]);
    expect(a).toEqual({ first_unverified_premise: null, tainted: [], tainted_by: {} });
  });
  it("survives cycles and unknown dependencies", () => {
    const a = analyzeTrajectory([
      { id: "a", outcome: "uncertain", depends_on: ["b", "missing"] },
      { id: "b", outcome: "uncertain", depends_on: ["a"] },
    ]);
    expect(a.tainted.sort()).toEqual(["a", "b"]);
  });
});
