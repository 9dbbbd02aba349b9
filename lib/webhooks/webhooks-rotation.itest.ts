/**
 * Rotating an endpoint's secret, end to end over real HTTP: the production server delivers to a
 * receiver this test starts, and the `standardwebhooks` library itself checks each delivery
 * against the old and the new secret — both verify during the overlap, only the new one after it.
 * On SQLite, and on PostgreSQL when INTEGRATION_DATABASE_URL names one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { startReceiver, type Receiver, type Received } from "./testing/receiver";
import { startWebhookApp, until, type WebhookApp } from "./testing/app";

let w: WebhookApp;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  w = await startWebhookApp("webhook_rotation");
});
afterAll(async () => {
  await w?.app.stop();
  await rx?.close();
  await w?.db.drop();
});

const hint = (secret: string) => `${secret.slice(0, 10)}…`;
/** Whether the library verifies this delivery with `secret`. */
const verifies = (r: Received, secret: string) => {
  try {
    new Webhook(secret).verify(r.raw, r.headers);
    return true;
  } catch {
    return false;
  }
};
/** Sends a test event to the endpoint and waits for the receiver to have it. */
async function deliveredTest(id: string, path: string): Promise<Received> {
  const sent = await w.api(`/api/v1/webhooks/${id}/test`, { body: {} });
  expect(sent.status).toBe(202);
  return until(`the test event at ${path}`, () => rx.received.find((r) => r.path === path && r.id === sent.body.message_id));
}
const rotate = (id: string, body?: unknown) => w.api(`/api/v1/webhooks/${id}/rotate-secret`, body === undefined ? { method: "POST" } : { body });
const previousColumns = async (id: string) =>
  (await w.db.query<Record<string, unknown>>("SELECT previous_secret_sealed, previous_secret_hint, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1", [id]))[0];

describe("webhook secret rotation", () => {
  it("during the overlap both secrets verify; after it only the new one, and the old one is cleared", async () => {
    const made = await w.api("/api/v1/webhooks", { body: { url: rx.url("/rotate") } });
    expect(made.status).toBe(201);
    const old = made.body.secret as string;
    expect(made.body).toMatchObject({ secret_rotated_at: null, previous_secret: null });
    const before = await deliveredTest(made.body.id, "/rotate");
    expect(before.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(verifies(before, old)).toBe(true);

    // An overlap of 8 seconds (overlap_hours takes fractions).
    const asked = Date.now();
    const rotated = await rotate(made.body.id, { overlap_hours: 8 / 3600 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect(rotated.body).toMatchObject({ id: made.body.id, secret_hint: hint(fresh), previous_secret: { hint: hint(old) }, secret_rotated_at: expect.any(String) });
    const until8 = Date.parse(rotated.body.previous_secret.accepted_until);
    expect(until8 - asked).toBeGreaterThanOrEqual(7_000);
    expect(until8 - asked).toBeLessThanOrEqual(9_000);
    // The new secret is shown that once: reading the endpoint shows only hints, and the old one's end.
    const read = await w.api(`/api/v1/webhooks/${made.body.id}`);
    expect(read.body.secret).toBeUndefined();
    expect(JSON.stringify(read.body)).not.toContain(fresh.slice(10));
    expect(read.body).toMatchObject({ secret_hint: hint(fresh), previous_secret: rotated.body.previous_secret });
    expect((await w.api("/api/v1/webhooks")).body.items[0].previous_secret).toEqual(rotated.body.previous_secret);

    const during = await deliveredTest(made.body.id, "/rotate");
    expect(Date.now()).toBeLessThan(until8);
    expect(during.headers["webhook-signature"]).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verifies(during, fresh)).toBe(true);
    expect(verifies(during, old)).toBe(true);

    // After the overlap: only the new secret signs; the library refuses the old one.
    await new Promise((r) => setTimeout(r, Math.max(0, until8 - Date.now() + 250)));
    const after = await deliveredTest(made.body.id, "/rotate");
    expect(after.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(verifies(after, fresh)).toBe(true);
    expect(verifies(after, old)).toBe(false);
    expect(() => new Webhook(old).verify(after.raw, after.headers)).toThrow();
    expect((await w.api(`/api/v1/webhooks/${made.body.id}`)).body.previous_secret).toBeNull();
    // The sender cleared it from the row with that attempt's record.
    await until("the old secret cleared", async () => (await previousColumns(made.body.id)).previous_secret_sealed === null);
    expect(await previousColumns(made.body.id)).toEqual({ previous_secret_sealed: null, previous_secret_hint: null, previous_secret_expires_at: null });
  });

  it("an empty body overlaps 24 hours; 0 drops the old secret at once; only the last secret replaced overlaps", async () => {
    const made = await w.api("/api/v1/webhooks", { body: { url: rx.url("/again") } });
    const a = made.body.secret as string;
    const asked = Date.now();
    const byDefault = await rotate(made.body.id);
    expect(byDefault.status, JSON.stringify(byDefault.body)).toBe(200);
    const b = byDefault.body.secret as string;
    expect(Math.abs(Date.parse(byDefault.body.previous_secret.accepted_until) - (asked + 24 * 3_600_000))).toBeLessThan(60_000);
    expect(byDefault.body.previous_secret.hint).toBe(hint(a));

    // Rotating again while a overlaps: b overlaps now, a is dropped.
    const again = await rotate(made.body.id, { overlap_hours: 1 });
    const c = again.body.secret as string;
    expect(again.body.previous_secret.hint).toBe(hint(b));
    const got = await deliveredTest(made.body.id, "/again");
    expect([verifies(got, c), verifies(got, b), verifies(got, a)]).toEqual([true, true, false]);

    const now = await rotate(made.body.id, { overlap_hours: 0 });
    expect(now.status).toBe(200);
    const d = now.body.secret as string;
    expect(now.body.previous_secret).toBeNull();
    expect(await previousColumns(made.body.id)).toEqual({ previous_secret_sealed: null, previous_secret_hint: null, previous_secret_expires_at: null });
    const last = await deliveredTest(made.body.id, "/again");
    expect(last.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect([verifies(last, d), verifies(last, c), verifies(last, b)]).toEqual([true, false, false]);
  });

  it("a bad body is a clear 4xx and changes nothing; an unknown endpoint is 404", async () => {
    const made = await w.api("/api/v1/webhooks", { body: { url: rx.url("/refused"), enabled: false } });
    const row = async () => (await w.db.query("SELECT * FROM webhook_endpoints WHERE id = $1", [made.body.id]))[0];
    const before = await row();
    for (const [body, status, message] of [
      [{ overlap_hours: 169 }, 422, /^overlap_hours must be a number from 0 to 168/],
      [{ overlap_hours: -1 }, 422, /^overlap_hours must be a number from 0 to 168/],
      [{ overlap_hours: "24" }, 422, /overlap_hours/],
      [{ overlap_hours: 1, secret: "whsec_mine" }, 422, /secret/],
      [[], 422, /object/],
    ] as const) {
      const res = await rotate(made.body.id, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.message).toMatch(message);
    }
    const raw = (text: string, type = "application/json") =>
      fetch(`${w.app.base}/api/v1/webhooks/${made.body.id}/rotate-secret`, { method: "POST", headers: { cookie: w.cookie, origin: w.app.base, "content-type": type }, body: text });
    expect((await raw("{")).status).toBe(400);
    expect((await raw('{"overlap_hours":1,"overlap_hours":2}')).status).toBe(400);
    expect((await raw("overlap_hours=1", "application/x-www-form-urlencoded")).status).toBe(415);
    expect(await row()).toEqual(before);

    const unknown = await rotate("ep_no-such-endpoint", {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    expect((await w.api(`/api/v1/webhooks/${made.body.id}/rotate-secret`)).status).toBe(405);
  });
});
