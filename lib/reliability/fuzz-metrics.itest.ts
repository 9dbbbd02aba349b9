/**
 * Fuzz family for GET /api/v1/metrics query parameters: random, hostile and repeated
 * parameters never get a 5xx; what is accepted or refused agrees with the documented rules
 * (since/until RFC 3339 and in order, tool/agent 1–200 characters of valid text, nothing else),
 * and an accepted answer is a well-formed report whose figures hold together.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { METRIC_NAMES } from "@/lib/domain/metrics";
import { normalizeInstant } from "@/lib/domain/time";
import { textProblem } from "@/lib/domain/json";
import { call, principal } from "@/lib/testing/integration";

let readToken: string;
beforeAll(async () => {
  readToken = (await principal("viewer", ["read"])).token;
});

const KNOWN = ["since", "until", "tool", "agent"] as const;
const instantArb = fc.oneof(
  fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom("2026-12-01T00:00:00Z", "2026-12-01T10:00:00+02:00", "2026-02-30T00:00:00Z", "2026-12-01", "now", "", "9999-12-31T23:59:59.999999999Z", "2026-12-01T00:00:00.123456789Z"),
  fc.string({ maxLength: 30 }),
);
const textArb = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ minLength: 190, maxLength: 210 }), fc.constantFrom("", "\u0000", "\ud800", "db.insert", "x y", "%", "💥".repeat(60)));
const paramArb = fc.oneof(
  fc.tuple(fc.constantFrom("since", "until"), instantArb),
  fc.tuple(fc.constantFrom("tool", "agent"), textArb),
  fc.tuple(fc.oneof(fc.constantFrom("metric", "limit", "__proto__", "SINCE", "tool[]"), fc.string({ maxLength: 8 })), fc.string({ maxLength: 8 })),
);

/** The documented rules: the answer the API must give to these (last-wins) parameters. */
function expectedValid(params: [string, string][]): boolean {
  const q = new Map<string, string>();
  // Next.js drops `__proto__` before the route sees the URL (see fuzz.itest.ts).
  for (const [k, v] of params) if (k !== "__proto__") q.set(k, v);
  for (const k of q.keys()) if (!(KNOWN as readonly string[]).includes(k)) return false;
  const since = q.has("since") ? normalizeInstant(q.get("since")!) : undefined;
  const until = q.has("until") ? normalizeInstant(q.get("until")!) : undefined;
  if (since === null || until === null) return false;
  if (since && until && since > until) return false;
  for (const k of ["tool", "agent"]) {
    const v = q.get(k);
    if (v === undefined) continue;
    if (v.length < 1 || v.length > 200 || textProblem(v)) return false;
  }
  return true;
}

describe("fuzz: GET /api/v1/metrics query parameters", () => {
  it("never a 5xx; refusals are 400 invalid_query exactly when the rules say; answers are well-formed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(paramArb, { maxLength: 5 }), async (params) => {
        const qs = new URLSearchParams(params).toString();
        const res = await call(`/api/v1/metrics?${qs}`, { token: readToken });
        const label = `?${qs} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, label).toBeLessThan(500);
        // URLSearchParams round-trips lone surrogates as U+FFFD: judge what the server received.
        const received = [...new URLSearchParams(qs)];
        if (expectedValid(received)) {
          expect(res.status, label).toBe(200);
          for (const m of METRIC_NAMES) {
            const f = res.body.metrics[m];
            expect(f.hit, label).toBeLessThanOrEqual(f.n);
            expect(f.from_samples, label).toBeLessThanOrEqual(f.n);
            if (f.n) expect(f.interval.low <= f.value && f.value <= f.interval.high, label).toBe(true);
            else expect(f.value, label).toBeNull();
          }
          expect(res.body.weekly.reduce((a: number, w: { operations: number }) => a + w.operations, 0), label).toBe(res.body.operations);
        } else {
          expect(res.status, label).toBe(400);
          expect(res.body.error.code, label).toBe("invalid_query");
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
  });
});
