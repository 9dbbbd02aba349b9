/**
 * Fuzz family for the gateway's calls (issue 48): `GET /api/v1/operations/{id}?wait=N` (the long
 * poll) with random and hostile `wait` values, repeated parameters and odd ids, and `GET
 * /api/v1/token` with every method and junk credentials. Never a 5xx; a `wait` out of range or not
 * a number is a 400 naming `wait`; a valid one answers exactly what the plain read answers (for a
 * decided operation, at once); nothing is ever written to the chain by a reader.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { OWN_OPERATION, operationIdSegment as idArb } from "./hostile-shapes";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

let readToken: string;
let reader: string;
let decided: string;
let open: string;

const theirs = async () => (await db()).chainRecord.count({ where: { actor: reader } });

beforeAll(async () => {
  const p = await principal("reviewer", ["read"]);
  [readToken, reader] = [p.token, p.email];
  const agent = await principal("reviewer", ["ingest", "verify"]);
  decided = unique("op-fz-wait-done");
  open = unique("op-fz-wait-open");
  const at = "2026-08-28T10:00:00Z";
  expect((await ingest(agent.token, { operation_id: decided, receipt: { status: "rejected", observed_at: at } })).status).toBe(201);
  expect((await ingest(agent.token, { operation_id: open, receipt: { status: "accepted", observed_at: at } })).status).toBe(201);
});

/** A wait value, valid or not: numbers in and far out of range, non-numbers, huge texts. */
const waitArb = fc.oneof(
  fc.double({ min: 0, max: 60, noNaN: true }).map((v) => ({ raw: String(v), valid: true })),
  fc.integer({ min: 61, max: 1e9 }).map((v) => ({ raw: String(v), valid: false })),
  fc.integer({ min: -1e9, max: -1 }).map((v) => ({ raw: String(v), valid: false })),
  fc.string({ maxLength: 20 }).filter((t) => t.trim() !== "" && !Number.isFinite(Number(t))).map((t) => ({ raw: t, valid: false })),
  fc.constantFrom(
    { raw: "NaN", valid: false },
    { raw: "Infinity", valid: false },
    { raw: "1e309", valid: false },
    { raw: "60.0000001", valid: false },
    { raw: "0x10", valid: true },
    { raw: "1e1", valid: true },
    { raw: "9".repeat(10_000), valid: false },
  ),
);

describe("fuzz: the long poll and who-am-I", () => {
  it("never a 5xx; a bad wait is a 400 naming it; a good one answers what the plain read does; nothing is written", async () => {
    const plain = (await call(`/api/v1/operations/${decided}`, { token: readToken })).body;
    await fc.assert(
      fc.asyncProperty(idArb, waitArb, fc.boolean(), fc.integer({ min: 1, max: 3 }), async (id, wait, onOpen, repeats) => {
        // A huge value goes to this route only: on a path a URL rewrites elsewhere (`%2e%2e`), a
        // 10 KB query draws an answer whose headers overflow the test client's 16 KB (left for
        // its own look: not this route's answer).
        if (wait.raw.length > 1000) id = OWN_OPERATION;
        const target = id === OWN_OPERATION ? (onOpen ? open : decided) : id;
        // On the undecided operation a valid wait really waits: keep those short.
        const value = onOpen && wait.valid ? "0.02" : wait.raw;
        // A value of 10,000 characters is sent once: three of them (30 KB of query) draw an answer
        // whose headers overflow the test's own HTTP client (undici's 16 KB), a limit of the client.
        const query = Array.from({ length: value.length > 1000 ? 1 : repeats }, () => `wait=${encodeURIComponent(value)}`).join("&");
        const before = await theirs();
        const res = await call(`/api/v1/operations/${target}?${query}`, { token: readToken });
        expect(res.status, `${target} ?${query.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (id !== OWN_OPERATION) {
          // An id no operation has (or a path a URL rewrites elsewhere): refused one way or another.
          expect(res.status).toBeGreaterThanOrEqual(400);
        } else if (!wait.valid) {
          // A query too long for the HTTP parser is refused before it reaches a route (431).
          if (query.length > 16_000) expect([400, 431]).toContain(res.status);
          else {
            expect(res.status, value.slice(0, 40)).toBe(400);
            expect(res.body.error.message).toMatch(/^wait /);
          }
        } else if (!onOpen) {
          expect(res.status).toBe(200);
          expect(res.body).toEqual(plain);
        } else {
          expect(res.status).toBe(200);
          expect(res.body.effective_outcome).toBe("uncertain");
        }
        expect(await theirs()).toBe(before);
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("who-am-I: any method, any credential, never a 5xx; only a GET with a good credential says who", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
        fc.oneof(fc.constant(readToken), fc.stringMatching(/^[\x21-\x7e]{0,60}$/), fc.constant("rcl_" + "x".repeat(43)), fc.constant("x".repeat(10_000))),
        async (method, token) => {
          const res = await call("/api/v1/token", { method, headers: { authorization: `Bearer ${token}` } });
          expect(res.status).toBeLessThan(500);
          if (method === "GET" && token === readToken) expect(res.body).toMatchObject({ kind: "token", scopes: ["read"], project: { slug: "default", base_path: "/p/default" } });
          else if (method === "OPTIONS") expect(res.status).toBe(token === readToken ? 204 : 401);
          else expect(res.status).toBeGreaterThanOrEqual(400);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
