/**
 * X-Forwarded-For counts only when RECONCILE_TRUSTED_PROXIES says a proxy stands in front (the
 * default — the socket's address — is tested against the suite's shared server in auth.itest.ts).
 * Servers of its own, on the suite's database, with the setting as a CIDR list and as a hop count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { startApp, type App } from "@/lib/reliability/harness";
import { db, principal, unique } from "@/lib/testing/integration";
import { signInHttp } from "@/lib/testing/sessions";

let ranges: App;
let hops: App;

beforeAll(async () => {
  const url = inject("databaseUrl");
  [ranges, hops] = await Promise.all([
    startApp(url, { env: { RECONCILE_TRUSTED_PROXIES: "10.0.0.0/8,127.0.0.1/32" } }),
    startApp(url, { env: { RECONCILE_TRUSTED_PROXIES: "1" } }),
  ]);
});

afterAll(async () => {
  await Promise.all([ranges?.stop(), hops?.stop()]);
});

const records = async (where: { actor?: string; contains?: string }) =>
  (
    // Sign-in events are the instance's: its own chain (lib/store/chain/instance-chain.ts).
    await (await db()).instanceEvent.findMany({
      where: { ...(where.actor ? { actor: where.actor } : {}), ...(where.contains ? { payload: { contains: where.contains } } : {}) },
      orderBy: { seq: "asc" },
    })
  ).map((e) => JSON.parse(e.payload));

describe("behind a trusted proxy", () => {
  it("with a CIDR list, the address the trusted proxy forwarded is recorded and throttled; a forged header is not", async () => {
    const p = await principal("viewer", ["read"]);
    await signInHttp(p.email, "nope", { "x-forwarded-for": "203.0.113.21", "x-reconcile-client-address": "192.0.2.66" }, ranges.base);
    await signInHttp(p.email, "integration-password", { "x-forwarded-for": "1.1.1.1, 203.0.113.22" }, ranges.base);
    expect((await records({ actor: p.email })).map((e) => [e.type, e.source])).toEqual([
      ["signin.failed", "203.0.113.21"],
      ["signin.succeeded", "203.0.113.22"],
    ]);
    expect(await (await db()).rateLimiterFlexible.count({ where: { key: "signin-address:203.0.113.21" } })).toBe(1);
    expect(await (await db()).rateLimiterFlexible.count({ where: { key: "signin-address:192.0.2.66" } })).toBe(0);
  });

  it("with a hop count, the entry that many hops back", async () => {
    const p = await principal("viewer", ["read"]);
    await signInHttp(p.email, "nope", { "x-forwarded-for": "1.1.1.1, 198.51.100.20" }, hops.base);
    expect((await records({ actor: p.email })).map((e) => e.source)).toEqual(["198.51.100.20"]);
  });

  it("an address past its limit adds one signin.throttled record for the window, however many attempts follow", async () => {
    const address = `198.51.100.${100 + Math.floor(Math.random() * 100)}`; // not the hop test's .20
    const attempt = (i: number) => signInHttp(`${unique(`nobody-${i}`)}@itest.example`, "wrong", { "x-forwarded-for": address }, ranges.base);
    // 500 failures from one address, each for another (unknown) account: no account limit is reached.
    for (let i = 0; i < 500; i += 5) {
      const batch = await Promise.all(Array.from({ length: 5 }, (_, j) => attempt(i + j)));
      expect(batch.map((r) => r.location).filter((l) => !/code=invalid/.test(l))).toEqual([]);
    }
    const failed = await records({ contains: `"source":"${address}"` });
    expect(failed.map((e) => e.type)).toEqual(Array(500).fill("signin.failed"));
    const more = await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(1000 + i)));
    for (let i = 0; i < 8; i++) more.push(await attempt(2000 + i));
    expect(more.every((r) => /code=throttled-(60|59)/.test(r.location))).toBe(true);
    const added = (await records({ contains: `"source":"${address}"` })).slice(500);
    expect(added).toEqual([expect.objectContaining({ type: "signin.throttled", scope: "address", key: address, source: address })]);
  });
});
