import { describe, expect, it } from "vitest";
import { sumPhases } from "./phases";

describe("sumPhases", () => {
  it("adds up each phase's count and time, most time first, and skips a cut or foreign line", () => {
    const text = [
      '{"phase":"server start","ms":2000}',
      '{"phase":"migrations deployed","ms":800}',
      '{"phase":"server start","ms":1500}',
      '{"phase":"database cloned from the template","ms":3}',
      '{"phase":"server st', // a process killed mid-write
      '{"ms":12}',
      "",
    ].join("\n");
    expect(sumPhases(text)).toEqual([
      { phase: "server start", count: 2, seconds: 3.5 },
      { phase: "migrations deployed", count: 1, seconds: 0.8 },
      { phase: "database cloned from the template", count: 1, seconds: 0.003 },
    ]);
  });
  it("nothing recorded: no rows", () => {
    expect(sumPhases("")).toEqual([]);
  });
});
