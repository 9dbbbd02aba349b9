/**
 * For the verifiers' integration tests: the production server on a fresh database of the suite's
 * kind (SQLite file or a new PostgreSQL database), with an admin token that may manage
 * verifiers, and the environment a test needs (the allowances for a local service, short
 * retries and timeouts). Plain HTTP helpers against it.
 */
import { startApp, type App } from "@/lib/reliability/harness";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";
import { createApiToken } from "@/lib/store/people/api-tokens";
import { disconnect } from "@/lib/store/db/db";
import { createUser } from "@/lib/store/people/users";

export type VerifierApp = { app: App; db: FreshDatabase; token: string; stop: () => Promise<void> };

export async function startVerifierApp(tag: string, env: Record<string, string>): Promise<VerifierApp> {
  const db = await freshDatabase(tag);
  const previous = process.env.DATABASE_URL;
  process.env.DATABASE_URL = db.url;
  let token: string;
  try {
    const email = `${tag}-${Date.now()}@verifiers.test`;
    await createUser({ email, password: "verifiers-password", role: "admin", actor: "itest", via: "cli" });
    token = (await createApiToken({ email, name: tag, scopes: ["admin", "ingest", "verify", "read"], actor: "itest" })).token;
  } finally {
    await disconnect();
    process.env.DATABASE_URL = previous;
  }
  const app = await startApp(db.url, { env: { RECONCILE_VERIFIER_RETRY_MS: "100", RECONCILE_VERIFIER_TIMEOUT_MS: "600", ...env } });
  return {
    app,
    db,
    token,
    stop: async () => {
      await app.stop();
      await db.drop();
    },
  };
}

export async function api(base: string, token: string, path: string, body?: unknown, method?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, {
    method: method ?? (body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Polls until `pick` returns a value (not undefined), or fails after `ms`. */
export async function until<T>(what: string, pick: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pick();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The checks each operation is owed, from its verifier.check jobs' payloads (rows of
 * `SELECT payload FROM job WHERE kind = 'verifier.check'`), each list sorted. A receipt ingested
 * after some of its checks' times (a loaded machine) folds the past ones into one
 * (checkSchedule), so a test reads what was scheduled rather than assuming every check.
 */
export function owedChecks(rows: { payload: string }[]): Map<string, number[]> {
  const owed = new Map<string, number[]>();
  for (const { payload } of rows) {
    const p = JSON.parse(payload) as { operation_id: string; check: number };
    owed.set(p.operation_id, [...(owed.get(p.operation_id) ?? []), p.check].sort((a, b) => a - b));
  }
  return owed;
}
