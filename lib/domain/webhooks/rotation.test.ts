import { describe, expect, it } from "vitest";
import { MAX_OVERLAP_HOURS, overlapEnd, rotateSecretSchema, stillAccepted } from "./rotation";

describe("secret rotation", () => {
  const now = new Date("2026-12-04T10:00:00.000Z");

  it("the old secret signs for the overlap asked, and not at all with 0", () => {
    expect(overlapEnd(now, 24)).toBe("2026-12-05T10:00:00.000Z");
    expect(overlapEnd(now, 0.5)).toBe("2026-12-04T10:30:00.000Z");
    expect(overlapEnd(now, MAX_OVERLAP_HOURS)).toBe("2026-12-11T10:00:00.000Z");
    expect(overlapEnd(now, 0)).toBeNull();
  });

  it("a previous secret is accepted strictly before its end, never without one or with a bad date", () => {
    const until = overlapEnd(now, 1)!;
    expect(stillAccepted(until, now)).toBe(true);
    expect(stillAccepted(until, new Date(Date.parse(until) - 1))).toBe(true);
    expect(stillAccepted(until, new Date(until))).toBe(false);
    expect(stillAccepted(until, new Date(Date.parse(until) + 1))).toBe(false);
    expect(stillAccepted(null, now)).toBe(false);
    expect(stillAccepted("not a date", now)).toBe(false);
  });

  it("the body: overlap_hours from 0 to 168, optional; anything else is refused", () => {
    expect(rotateSecretSchema.parse({})).toEqual({});
    expect(rotateSecretSchema.parse({ overlap_hours: 0 })).toEqual({ overlap_hours: 0 });
    expect(rotateSecretSchema.parse({ overlap_hours: 168 })).toEqual({ overlap_hours: 168 });
    for (const bad of [{ overlap_hours: -1 }, { overlap_hours: 168.5 }, { overlap_hours: "24" }, { overlap_hours: null }, { overlap_hours: Number.NaN }, { hours: 1 }, [], null]) {
      expect(rotateSecretSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
