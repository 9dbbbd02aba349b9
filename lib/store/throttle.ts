import "server-only";
import { RateLimiterPrisma } from "rate-limiter-flexible";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { databaseUrl, provider, writer } from "./db";
import { PrismaClient as SqliteClient } from "./generated/sqlite/client";

/**
 * Failed sign-in limits, kept in the database (rate-limiter-flexible's Prisma store) so they
 * survive restarts and are shared by every app instance on one PostgreSQL.
 */
export const ACCOUNT_FAILURES_PER_HOUR = 100;
export const ADDRESS_FAILURES_PER_HOUR = 500;
const HOUR = 60 * 60;

type Limiters = { account: RateLimiterPrisma; address: RateLimiterPrisma };
const holder = globalThis as unknown as { __reconcileLimiters?: Promise<Limiters> & { url?: string } };

async function limiters(): Promise<Limiters> {
  const url = databaseUrl();
  if (!holder.__reconcileLimiters || holder.__reconcileLimiters.url !== url) {
    const p = (async () => {
      // On SQLite the limiter gets its own connection: its writes must never run inside
      // another request's open transaction on the shared writer connection.
      const client =
        provider() === "sqlite" ? new SqliteClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) }) : await writer();
      const common = { storeClient: client, tableName: "rateLimiterFlexible", duration: HOUR, clearExpiredByTimeout: false };
      return {
        account: new RateLimiterPrisma({ ...common, keyPrefix: "signin-account", points: ACCOUNT_FAILURES_PER_HOUR }),
        address: new RateLimiterPrisma({ ...common, keyPrefix: "signin-address", points: ADDRESS_FAILURES_PER_HOUR }),
      };
    })();
    holder.__reconcileLimiters = Object.assign(p, { url });
  }
  return holder.__reconcileLimiters;
}

/** Minutes until this account and address may try again, or 0 when they may now. */
export async function signInBlockedFor(email: string, address: string | null): Promise<number> {
  const l = await limiters();
  const [acc, addr] = await Promise.all([l.account.get(email), address ? l.address.get(address) : null]);
  const waits = [
    acc && acc.consumedPoints >= ACCOUNT_FAILURES_PER_HOUR ? acc.msBeforeNext : 0,
    addr && addr.consumedPoints >= ADDRESS_FAILURES_PER_HOUR ? addr.msBeforeNext : 0,
  ];
  const ms = Math.max(...waits);
  return ms > 0 ? Math.max(1, Math.ceil(ms / 60_000)) : 0;
}

export async function recordSignInFailure(email: string, address: string | null): Promise<void> {
  const l = await limiters();
  const consume = (limiter: RateLimiterPrisma, key: string) =>
    // Past the limit the library rejects with the state instead of a value: that is the point.
    limiter.consume(key).catch((e: unknown) => {
      if (e instanceof Error) throw e;
    });
  await Promise.all([consume(l.account, email), address ? consume(l.address, address) : null]);
}
