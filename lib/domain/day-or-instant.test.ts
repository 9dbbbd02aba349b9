import { describe, expect, it } from "vitest";
import { dayOrInstant } from "./time";

describe("dayOrInstant: a date field as people type it", () => {
  it("reads a plain day as its start in UTC", () => {
    expect(dayOrInstant("2026-11-01")).toBe("2026-11-01T00:00:00Z");
    expect(dayOrInstant(" 2024-02-29 ")).toBe("2024-02-29T00:00:00Z");
  });
  it("leaves a full date-time as it is", () => {
    expect(dayOrInstant("2026-11-01T12:30:00+02:00")).toBe("2026-11-01T12:30:00+02:00");
  });
  it("leaves what is not a calendar day for the filters' check to refuse", () => {
    for (const v of ["2026-02-30", "2025-02-29", "2026-13-01", "01/11/2026", "2026-1-1", "yesterday", ""]) expect(dayOrInstant(v)).toBe(v);
  });
});
