import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startApp, type App } from "@/lib/reliability/harness";
import { INTEGRATION_AUTH_SECRET } from "@/lib/testing/integration-setup";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { signInHttp } from "@/lib/testing/sessions";

/**
 * TRUST.md "Backpressure": exports started from the UI (a session) run one at a time per user.
 * The first export below is ~7 MB and left unread, so it is still streaming (held back by the
 * connection) when the second one asks: that one is 429 `busy` with Retry-After, while another
 * user's export runs; once the first is finished, the user may export again. The slot is a lease
 * in the database: a second server on the same database refuses the user's export too.
 */
const trajectory = unique("one-export");
let alice: string;
let bob: string;
let instanceB: App;

beforeAll(async () => {
  const seeder = await principal("admin", ["ingest"]);
  for (let b = 0; b < 2; b++) {
    const records = Array.from({ length: 4 }, (_, i) => ({ operation_id: `${trajectory}-${b}-${i}`, trajectory_id: trajectory, intent: { params: { text: "x".repeat(900_000) } } }));
    expect((await call("/api/v1/receipts", { token: seeder.token, body: { records } })).status).toBe(200);
  }
  const a = await principal("viewer", ["read"]);
  const b = await principal("viewer", ["read"]);
  alice = (await signInHttp(a.email, "integration-password")).cookie!;
  bob = (await signInHttp(b.email, "integration-password")).cookie!;
  // Another instance on the same database, accepting the same sessions.
  instanceB = await startApp(inject("databaseUrl"), { env: { AUTH_SECRET: INTEGRATION_AUTH_SECRET, RECONCILE_CHECKPOINT_EVERY: "999999999,999h" } });
});
afterAll(async () => {
  await instanceB?.stop();
});

const exportFor = (cookie: string, base = baseUrl) => fetch(`${base}/api/v1/audit/export?format=ndjson&trajectory_id=${trajectory}`, { headers: { cookie } });

it("a second export of the same user while the first streams is 429 busy; another user's is not blocked; after the first, the user exports again", async () => {
  const first = await exportFor(alice);
  expect(first.status).toBe(200);
  const reader = first.body!.getReader();
  await reader.read(); // the stream has begun, and is left waiting

  const second = await exportFor(alice);
  expect(second.status).toBe(429);
  expect(Number(second.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  const body = (await second.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("busy");
  expect(body.error.message).toMatch(/An export you started is still running/);
  // The same on another instance: the slot is the database's, not one process's.
  const elsewhere = await exportFor(alice, instanceB.base);
  expect(elsewhere.status, instanceB.output().slice(-2000)).toBe(429);
  expect(((await elsewhere.json()) as { error: { code: string } }).error.code).toBe("busy");

  const other = await exportFor(bob);
  expect(other.status).toBe(200);
  expect((await other.text()).split("\n").filter((l) => l.includes(trajectory)).length).toBe(8);

  let bytes = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
  expect(bytes).toBeGreaterThan(5_000_000);
  // The slot is given back when the stream ends (the server's side may finish a moment later).
  let again = await exportFor(alice);
  for (let i = 0; again.status === 429 && i < 20; i++) {
    await again.arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));
    again = await exportFor(alice);
  }
  expect(again.status).toBe(200);
  await again.arrayBuffer();
});
