/**
 * Helpers for integration tests: the server under test, its database, and principals made
 * through the real use cases (users, tokens). Every test makes its own users with unique names.
 */
import { inject } from "vitest";
import { randomUUID } from "node:crypto";

export const baseUrl = inject("baseUrl");
process.env.DATABASE_URL = inject("databaseUrl");

const store = {
  users: () => import("@/lib/store/people/users"),
  tokens: () => import("@/lib/store/people/api-tokens"),
  db: () => import("@/lib/store/db/db"),
};

export function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A new user of this role and a token with these scopes. */
export async function principal(role: "viewer" | "reviewer" | "admin", scopes: string[]): Promise<{ email: string; token: string }> {
  const email = `${unique(role)}@itest.example`;
  await (await store.users()).createUser({ email, password: "integration-password", role, actor: "itest", via: "cli" });
  const { token } = await (await store.tokens()).createApiToken({ email, name: "itest", scopes, actor: "itest" });
  return { email, token };
}

export async function db() {
  return (await store.db()).reader();
}

export async function chainCount(): Promise<number> {
  return (await db()).chainRecord.count();
}

type Init = { token?: string; body?: unknown; raw?: string | Uint8Array; contentType?: string; method?: string; headers?: Record<string, string> };

export async function call(path: string, init: Init = {}): Promise<{ status: number; body: any; text: string }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: BodyInit | undefined;
  if (init.raw !== undefined) body = init.raw as BodyInit;
  else if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers["content-type"] = init.contentType ?? "application/json";
  const method = init.method ?? (body !== undefined ? "POST" : "GET");
  let res: Response;
  try {
    res = await fetch(baseUrl + path, { method, headers, body });
  } catch (e) {
    // A pooled keep-alive socket the server closed while a slow step ran: a browser retries an
    // idempotent request on a fresh connection, and so do we (never a POST).
    if (method !== "GET") throw e;
    res = await fetch(baseUrl + path, { method, headers, body });
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: res.status, body: parsed, text };
}

export const ingest = (token: string, body: unknown) => call("/api/v1/receipts", { token, body });
