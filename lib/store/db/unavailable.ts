/**
 * The database's errors that are not bugs, recognised through whatever wraps them: the database
 * unreachable or not answering in time (isDatabaseUnavailable), or its disk full (isStorageFull).
 *
 * Whether an error means the database could not be reached or did not answer in time — the
 * network to it dropped or black-holed, it stalled, restarted or refused connections — rather
 * than a bug or a refusal. Such a request is answered 503 with Retry-After (lib/api/errors.ts),
 * never 500: nothing is wrong with it, and sending it again later may well succeed. Errors come
 * from the `pg` driver (the ingest pool, pg-direct.ts), through Prisma's pg adapter (every other
 * query), and from a deadline of pg-deadline.ts.
 */

/** Node's socket errors that mean the connection is gone or was never made. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ECONNABORTED"]);

/**
 * PostgreSQL's SQLSTATEs of the same kind: class 08 (connection exception), 57014 (a statement
 * cancelled by statement_timeout), 57P01–57P03 (shutting down, crashed, starting up), 53300 (too
 * many connections), 25P03 (idle_in_transaction_session_timeout), 25006 (a write on a read-only
 * host: a connection to a primary that became a standby, dropped by pg-deadline.ts; the
 * application itself never writes in a read-only transaction).
 */
const SQLSTATES = new Set(["57014", "57P01", "57P02", "57P03", "53300", "25P03", "25006"]);

/** The `pg` driver's and pg-pool's own messages for a lost or unanswered connection. */
const DRIVER_MESSAGES = [
  "Query read timeout",
  "timeout exceeded when trying to connect",
  "Connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "Connection terminated unexpectedly",
  "terminating connection",
  // A client's own connect deadline (pg's Client with connectionTimeoutMillis).
  "timeout expired",
];

/** Prisma's codes: can't reach (P1001), timed out (P1002), connection closed (P1017), pool timeout (P2024). */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1017", "P2024"]);

/** Prisma's driver-adapter error kinds of the same meaning (@prisma/driver-adapter-utils). */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);

type DbError = { code?: unknown; message?: unknown; cause?: unknown; kind?: unknown; originalCode?: unknown; meta?: unknown };

/** Whether `test` holds for `e` or for an error it wraps: Prisma wraps the adapter's error (DriverAdapterError's cause, a known request error's meta.driverAdapterError). */
function inChain(e: unknown, test: (err: DbError) => boolean, depth = 0): boolean {
  if (!e || typeof e !== "object" || depth > 5) return false;
  const err = e as DbError;
  if (test(err)) return true;
  const meta = err.meta as { driverAdapterError?: unknown } | undefined;
  return inChain(err.cause, test, depth + 1) || (meta !== null && typeof meta === "object" && inChain(meta.driverAdapterError, test, depth + 1));
}

export function isDatabaseUnavailable(e: unknown): boolean {
  return inChain(e, (err) => {
    if (typeof err.code === "string" && (SOCKET_CODES.has(err.code) || SQLSTATES.has(err.code) || err.code.startsWith("08") || PRISMA_CODES.has(err.code))) return true;
    if (typeof err.originalCode === "string" && (SQLSTATES.has(err.originalCode) || err.originalCode.startsWith("08"))) return true;
    if (typeof err.kind === "string" && ADAPTER_KINDS.has(err.kind)) return true;
    return typeof err.message === "string" && DRIVER_MESSAGES.some((m) => (err.message as string).includes(m));
  });
}

/**
 * Whether the database refused a write for want of space: SQLite's SQLITE_FULL ("database or
 * disk is full"), PostgreSQL's 53100 disk_full, or ENOSPC from a file write. Nothing of the
 * write is stored (both roll it back), and it succeeds again once space is freed: answered 507
 * with Retry-After (lib/api/errors.ts), not as a fault of the server.
 */
export function isStorageFull(e: unknown): boolean {
  return inChain(e, (err) => {
    if (err.code === "SQLITE_FULL" || err.code === "53100" || err.code === "ENOSPC" || err.originalCode === "53100") return true;
    return typeof err.message === "string" && /database or disk is full|No space left on device|could not extend file/i.test(err.message);
  });
}

/** Seconds a client should wait before sending a request refused for this again. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
