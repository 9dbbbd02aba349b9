import "server-only";
import { RateLimiterPrisma } from "rate-limiter-flexible";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { databaseUrl, provider, type Db } from "../db/database";
import { instanceWriter } from "../db/db";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client";

/**
 * Failed sign-in limits, kept in the database (rate-limiter-flexible's Prisma store) so they
 * survive restarts and are shared by every app instance on one PostgreSQL.
 *
 * Keys: `signin-account:<digest>` — the SHA-256 digest of the typed identifier (lib/crypto/identifier.ts),
 * never the identifier itself, which may be a password typed into the email field — and
 * `signin-address:<address>`.
 */
export const ACCOUNT_FAILURES_PER_HOUR = 100;
export const ADDRESS_FAILURES_PER_HOUR = 500;
const HOUR = 60 * 60;
const ACCOUNT_PREFIX = "signin-account";
const ADDRESS_PREFIX = "signin-address";

type Limiters = { client: Db; account: RateLimiterPrisma; address: RateLimiterPrisma };
const holder = globalThis as unknown as { __reconcileLimiters?: Promise<Limiters> & { url?: string } };

async function limiters(): Promise<Limiters> {
  const url = databaseUrl();
  if (!holder.__reconcileLimiters || holder.__reconcileLimiters.url !== url) {
    const p = (async () => {
      // On SQLite the limiter gets its own connection: its writes must never run inside
      // another request's open transaction on the shared writer connection.
      const client =
        provider() === "sqlite" ? new SqliteClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) }) : await instanceWriter();
      const common = { storeClient: client, tableName: "rateLimiterFlexible", duration: HOUR, clearExpiredByTimeout: false };
      return {
        client,
        account: new RateLimiterPrisma({ ...common, keyPrefix: ACCOUNT_PREFIX, points: ACCOUNT_FAILURES_PER_HOUR }),
        address: new RateLimiterPrisma({ ...common, keyPrefix: ADDRESS_PREFIX, points: ADDRESS_FAILURES_PER_HOUR }),
      };
    })();
    holder.__reconcileLimiters = Object.assign(p, { url });
  }
  return holder.__reconcileLimiters;
}

/** One key over its limit: which, and when its window ends (the same instant for every attempt in it). */
export type ThrottleWindow = { scope: "account" | "address"; key: string; storeKey: string; until: Date };

/**
 * The windows that currently refuse this account (by its identifier's digest) and address, and
 * the minutes until both allow an attempt again (0: not throttled).
 */
export async function signInThrottle(accountKey: string, address: string | null): Promise<{ minutes: number; windows: ThrottleWindow[] }> {
  const l = await limiters();
  const keys = [
    { scope: "account" as const, key: accountKey, storeKey: `${ACCOUNT_PREFIX}:${accountKey}`, limit: ACCOUNT_FAILURES_PER_HOUR },
    ...(address ? [{ scope: "address" as const, key: address, storeKey: `${ADDRESS_PREFIX}:${address}`, limit: ADDRESS_FAILURES_PER_HOUR }] : []),
  ];
  // Read the rows themselves rather than the library's summary: the window's end (`expire`) is
  // what identifies a window, and it is set once when the window starts.
  const now = new Date();
  const rows = await l.client.rateLimiterFlexible.findMany({ where: { key: { in: keys.map((k) => k.storeKey) }, expire: { gt: now } } });
  const windows: ThrottleWindow[] = [];
  for (const k of keys) {
    const row = rows.find((r) => r.key === k.storeKey);
    if (row?.expire && row.points >= k.limit) windows.push({ scope: k.scope, key: k.key, storeKey: k.storeKey, until: row.expire });
  }
  const ms = Math.max(0, ...windows.map((w) => w.until.getTime() - now.getTime()));
  return { minutes: ms > 0 ? Math.max(1, Math.ceil(ms / 60_000)) : 0, windows };
}

export async function recordSignInFailure(accountKey: string, address: string | null): Promise<void> {
  const l = await limiters();
  const consume = (limiter: RateLimiterPrisma, key: string) =>
    // Past the limit the library rejects with the state instead of a value: that is the point.
    limiter.consume(key).catch((e: unknown) => {
      if (e instanceof Error) throw e;
    });
  await Promise.all([consume(l.account, accountKey), address ? consume(l.address, address) : null]);
}
