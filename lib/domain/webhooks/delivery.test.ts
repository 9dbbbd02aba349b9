import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { afterAttempt, MAX_ATTEMPTS, RETRY_SCHEDULE_MS, retryAfterMs, scheduleScale } from "./schedule";
import { newSecret, openSecret, sealSecret, secretHint, signedHeaders } from "./signing";

const now = Date.parse("2026-12-01T00:00:00Z");
const mid = () => 0.5; // no jitter

describe("the delivery schedule", () => {
  it("is the specification's: 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h", () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(MAX_ATTEMPTS).toBe(10);
  });
  it("2xx delivers, 410 disables, the last failure fails", () => {
    for (const s of [200, 201, 204, 299]) expect(afterAttempt(1, s, { now })).toEqual({ kind: "delivered" });
    expect(afterAttempt(3, 410, { now })).toEqual({ kind: "gone" });
    expect(afterAttempt(MAX_ATTEMPTS, 500, { now })).toEqual({ kind: "failed" });
    expect(afterAttempt(MAX_ATTEMPTS, null, { now })).toEqual({ kind: "failed" });
  });
  it("retries any other answer, or none, after the next delay", () => {
    for (let n = 1; n < MAX_ATTEMPTS; n++) expect(afterAttempt(n, 500, { now, random: mid })).toEqual({ kind: "retry", at: now + RETRY_SCHEDULE_MS[n] });
    for (const s of [null, 301, 400, 404, 429, 503]) expect(afterAttempt(1, s, { now, random: mid }).kind).toBe("retry");
  });
  it("jitters by at most 10%", () => {
    const lo = afterAttempt(2, 500, { now, random: () => 0 }) as { at: number };
    const hi = afterAttempt(2, 500, { now, random: () => 0.999999 }) as { at: number };
    expect(lo.at - now).toBe(270_000);
    expect(hi.at - now).toBeLessThanOrEqual(330_000);
    expect(hi.at - now).toBeGreaterThan(329_000);
  });
  it("honours Retry-After when it asks for later than the schedule, never sooner", () => {
    expect(afterAttempt(1, 429, { now, random: mid, retryAfter: "120" })).toEqual({ kind: "retry", at: now + 120_000 });
    expect(afterAttempt(2, 503, { now, random: mid, retryAfter: "1" })).toEqual({ kind: "retry", at: now + 300_000 });
    const date = new Date(now + 3600_000).toUTCString();
    expect(afterAttempt(1, 503, { now, random: mid, retryAfter: date })).toEqual({ kind: "retry", at: now + 3600_000 });
  });
  it("Retry-After: seconds or a date; nonsense ignored; capped at a day", () => {
    expect(retryAfterMs("30", now)).toBe(30_000);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
    expect(retryAfterMs("99999999", now)).toBe(24 * 3600_000);
    expect(retryAfterMs(new Date(now - 5000).toUTCString(), now)).toBe(0);
  });
  it("scales for tests, the schedule only", () => {
    expect(afterAttempt(2, 500, { now, random: mid, scale: 0.001 })).toEqual({ kind: "retry", at: now + 300 });
    expect(scheduleScale(undefined)).toBe(1);
    expect(scheduleScale("0.01")).toBe(0.01);
    expect(() => scheduleScale("-1")).toThrow(/RECONCILE_WEBHOOK_SCHEDULE_SCALE/);
    expect(() => scheduleScale("fast")).toThrow(/RECONCILE_WEBHOOK_SCHEDULE_SCALE/);
  });
});

describe("signing", () => {
  it("signs so that the standardwebhooks library verifies it", () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: "webhook.test", timestamp: "t", data: {} });
    const headers = signedHeaders(secret, "msg_1", new Date(), body);
    expect(headers["webhook-id"]).toBe("msg_1");
    expect(headers["webhook-signature"]).toMatch(/^v1,/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body + " ", headers)).toThrow();
  });
  it("while a secret rotates, signs with both, space-separated: the library verifies with either, not with a third", () => {
    const [fresh, old] = [newSecret(), newSecret()];
    const body = JSON.stringify({ type: "webhook.test", timestamp: "t", data: {} });
    const at = new Date();
    const headers = signedHeaders([fresh, old], "msg_2", at, body);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    expect(headers["webhook-signature"].split(" ")[0]).toBe(signedHeaders(fresh, "msg_2", at, body)["webhook-signature"]);
    expect(new Webhook(fresh).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(old).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => signedHeaders([], "msg_3", at, body)).toThrow(/at least one secret/);
  });
  it("stores secrets sealed under the server's secret, readable only with it", () => {
    const secret = newSecret();
    const sealed = sealSecret(secret, "server-secret-1");
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(openSecret(sealed, "server-secret-1")).toBe(secret);
    expect(() => openSecret(sealed, "server-secret-2")).toThrow();
    expect(sealSecret(secret, "server-secret-1")).not.toBe(sealed);
    expect(() => sealSecret(secret, "")).toThrow(/AUTH_SECRET/);
    expect(secretHint(secret)).toBe(`${secret.slice(0, 10)}…`);
  });
});
