import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoRecords } from "./demo-data";
import { toInstant } from "./time";

/** Every observed_at in a record: the receipt's and each canonical read's. */
function times(r: Record<string, unknown>): string[] {
  const out: string[] = [];
  const receipt = r.receipt as { observed_at?: string } | undefined;
  if (receipt?.observed_at) out.push(receipt.observed_at);
  const reads = r.canonical_read === undefined ? [] : Array.isArray(r.canonical_read) ? r.canonical_read : [r.canonical_read];
  for (const x of reads as { observed_at: string }[]) out.push(x.observed_at);
  return out;
}

describe("demo data", () => {
  // From after the essay's fixed records (2026-08-28) on.
  it("never dates an observation after the moment it is made for, at any time of day (the server refuses those)", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2026, 8, 1), max: Date.UTC(2030, 0, 1) }), (ms) => {
        const limit = BigInt(ms) * 1_000_000n;
        for (const r of demoRecords(new Date(ms))) for (const t of times(r)) expect(toInstant(t)! <= limit, `${r.operation_id} ${t} after ${new Date(ms).toISOString()}`).toBe(true);
      }),
      { numRuns: 50 },
    );
  });
});
