/**
 * A Reconcile server of the webhook tests' own (its own database, the delivery schedule scaled
 * down, loopback receivers allowed), an admin signed in, and API calls against it.
 */
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";
import { prepareDatabase, startApp, type App, type Tokens } from "@/lib/reliability/harness";
import { signInHttp } from "@/lib/testing/sessions";

export type WebhookApp = {
  app: App;
  db: FreshDatabase;
  tokens: Tokens;
  email: string;
  cookie: string;
  /** JSON API call as the signed-in admin (or with `token`). */
  api: (path: string, init?: { method?: string; body?: unknown; token?: string }) => Promise<{ status: number; body: any }>;
  restart: (env?: Record<string, string>) => Promise<void>;
};

export const WEBHOOK_TEST_ENV = {
  RECONCILE_WEBHOOK_ALLOW_HTTP: "1",
  RECONCILE_WEBHOOK_ALLOW_PRIVATE: "1",
  // 0, 5 ms, 300 ms, 1.8 s, 7.2 s, …: the schedule's shape, in test time.
  RECONCILE_WEBHOOK_SCHEDULE_SCALE: "0.001",
};

export async function startWebhookApp(tag: string, env: Record<string, string> = {}): Promise<WebhookApp> {
  const db = await freshDatabase(tag);
  const { tokens, email, password } = await prepareDatabase(db.url, tag);
  const fullEnv = () => ({ ...WEBHOOK_TEST_ENV, ...env });
  const w: WebhookApp = {
    app: await startApp(db.url, { env: fullEnv() }),
    db,
    tokens,
    email,
    cookie: "",
    api: async (path, init = {}) => {
      const headers: Record<string, string> = init.token ? { authorization: `Bearer ${init.token}` } : { cookie: w.cookie, origin: w.app.base };
      if (init.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(w.app.base + path, {
        method: init.method ?? (init.body !== undefined ? "POST" : "GET"),
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const text = await res.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      return { status: res.status, body };
    },
    restart: async (more = {}) => {
      await w.app.stop();
      env = { ...env, ...more };
      w.app = await startApp(db.url, { port: Number(new URL(w.app.base).port), env: fullEnv() });
    },
  };
  const signed = await signInHttp(email, password, {}, w.app.base);
  if (!signed.cookie) throw new Error(`could not sign in: ${signed.location}`);
  w.cookie = signed.cookie;
  return w;
}

/** Waits until `check` returns something truthy (polling), or fails naming `what`. */
export async function until<T>(what: string, check: () => T | Promise<T>, ms = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
