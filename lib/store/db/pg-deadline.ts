import "server-only";
import pg from "pg";
import { envSetting } from "@/lib/domain/settings";

/**
 * Deadlines on PostgreSQL connections, for both pools (Prisma's and the ingest pool). The `pg`
 * driver waits for an answer forever by default: when the network to the database black-holes
 * (nothing comes back, nobody says so) or the database stalls, a request would hang as long as
 * TCP does (minutes). With these, a request ends within about DATABASE_QUERY_TIMEOUT_MS plus
 * DATABASE_CONNECT_TIMEOUT_MS, in a 503 (unavailable.ts), and the pool recovers by itself:
 *
 * - a new connection, or a free one of a full pool, is waited for DATABASE_CONNECT_TIMEOUT_MS;
 * - a query's answer is waited for DATABASE_QUERY_TIMEOUT_MS; then the connection is destroyed
 *   (the driver's own `query_timeout` leaves it in use with the query still running, and a pool
 *   would hand it out again to wait behind it). The database sees the connection close and
 *   rolls its transaction back; whatever was waiting on that connection fails at once;
 * - TCP keep-alive, so that a connection idle in the pool across a partition is found dead;
 * - a connection whose host turned read-only (25006: a standby, after a failover) is destroyed too.
 */
export class DeadlineClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
  }

  // pg's overloads (a callback last, or a promise) all pass through; a query past its deadline abandons the connection.
  query(...args: unknown[]): never {
    const last = args[args.length - 1];
    if (typeof last === "function") {
      args[args.length - 1] = (err: unknown, res: unknown) => {
        if (timedOut(err) || readOnly(err)) this.abandon();
        (last as (e: unknown, r: unknown) => void)(err, res);
      };
    }
    const result = (super.query as (...a: unknown[]) => unknown).apply(this, args);
    if (result && typeof (result as Promise<unknown>).catch === "function") {
      (result as Promise<unknown>).catch((e: unknown) => {
        if (timedOut(e) || readOnly(e)) this.abandon();
      });
    }
    return result as never;
  }

  /** Destroys the socket: every query on this connection fails, and the pool drops it. */
  abandon(): void {
    // Not queryable from now on, so that a pool given it back at once drops it rather than
    // keeping it until the socket's close event arrives (pg-pool reads `_queryable` on release).
    (this as unknown as { _queryable: boolean })._queryable = false;
    (this as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy();
  }
}

const timedOut = (e: unknown) => e instanceof Error && e.message === "Query read timeout";
/**
 * A write refused because the host is read-only: after a failover, a connection still open to
 * a host that became a standby. Kept, it would refuse every write; dropped, the pool opens a
 * new one, which looks for the primary (pg-failover.ts).
 */
const readOnly = (e: unknown) => (e as { code?: unknown } | null)?.code === "25006";

/** The deadline options of a pool: see the comment above. */
export function deadlineOptions(): Pick<pg.PoolConfig, "Client" | "connectionTimeoutMillis" | "query_timeout" | "keepAlive" | "keepAliveInitialDelayMillis"> {
  return {
    Client: DeadlineClient as unknown as typeof pg.Client,
    connectionTimeoutMillis: envSetting("DATABASE_CONNECT_TIMEOUT_MS"),
    query_timeout: envSetting("DATABASE_QUERY_TIMEOUT_MS"),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}
