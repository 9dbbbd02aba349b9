import "server-only";
import pg from "pg";
import { DeadlineClient } from "./pg-deadline";
import { parsePgUrl, withoutSchema, type PgHost } from "./pg-hosts";
import { pointAt, probe } from "./pg-probe";

/**
 * Several PostgreSQL hosts in DATABASE_URL (pg-hosts.ts), for failover: node-postgres has no
 * multi-host strings nor `target_session_attrs`, so the pools' connection class (both pools:
 * Prisma's and the ingest pool) does what libpq does. Each new connection tries the hosts in
 * turn, starting from the last one found good, and connects to the first that fits:
 * `read-write` a host that is not in recovery and whose transactions are not read-only,
 * `primary` one not in recovery, `any` one that accepts a connection. While none fits, the
 * connection fails with SQLSTATE 08001, which the API answers 503 `unavailable` with
 * Retry-After (unavailable.ts).
 *
 * A connection kept across a failover cannot go on writing to a host that became a standby:
 * a write there fails with 25006 (read-only transaction), on which DeadlineClient drops the
 * connection, and the request is answered 503; the next connection looks for the primary again.
 * An old primary that is simply gone drops its connections (the pool replaces them).
 *
 * One host without target_session_attrs (the ordinary case) is left to pg as it is.
 */
export function pgConnection(url: string): { connectionString: string; Client: typeof pg.Client; options?: string } {
  // A project's schema (`?schema=project_…`, lib/domain/projects.ts): every connection's search_path, so
  // unqualified SQL finds that project's tables; pg itself would not understand the parameter.
  const { url: bare, schema } = withoutSchema(url);
  const options = schema ? { options: `-c search_path=${schema}` } : {};
  const parsed = parsePgUrl(bare);
  if (parsed.hosts.length <= 1 && parsed.targetSessionAttrs === "any") {
    return { connectionString: bare, Client: DeadlineClient as unknown as typeof pg.Client, ...options };
  }
  const { hosts, targetSessionAttrs } = parsed;
  const state = { preferred: 0 };
  class FailoverClient extends DeadlineClient {
    private readonly config: pg.ClientConfig;
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.config = typeof config === "string" ? { connectionString: config } : { ...config };
    }

    // pg's overloads: a callback (the pool's way), or a promise.
    connect(...args: unknown[]): never {
      const callback = args[0] as ((err: Error | null, c?: pg.Client) => void) | undefined;
      const done = this.choose().then((host) => {
        // The pool may have given up meanwhile (its own connect deadline destroys the socket).
        if ((this as unknown as { connection?: { stream?: { destroyed?: boolean } } }).connection?.stream?.destroyed) throw unavailable("timeout expired while looking for a writable PostgreSQL host");
        pointAt(this as unknown as pg.Client, host);
        return (super.connect as () => Promise<unknown>).call(this);
      });
      if (callback) {
        done.then(() => callback(null, this as unknown as pg.Client), (e: Error) => callback(e));
        return undefined as never;
      }
      return done.then(() => this) as never;
    }

    /** The first host, from the last good one on, that fits target_session_attrs. */
    private async choose(): Promise<PgHost> {
      const why: string[] = [];
      for (let k = 0; k < hosts.length; k++) {
        const i = (state.preferred + k) % hosts.length;
        const verdict = await probe(this.config, hosts[i], targetSessionAttrs, pointAt);
        if (verdict === null) {
          state.preferred = i;
          return hosts[i];
        }
        why.push(`${hosts[i].host}:${hosts[i].port} ${verdict}`);
      }
      throw unavailable(`no ${targetSessionAttrs === "any" ? "reachable" : "writable"} PostgreSQL host: ${why.join("; ")}`);
    }
  }
  return { connectionString: parsed.connectionString, Client: FailoverClient as unknown as typeof pg.Client, ...options };
}

const unavailable = (message: string) => Object.assign(new Error(message), { code: "08001" });

/** One client (not pooled) for `url`, one host or several: for the backup and such. */
export function pgClient(url: string, config: pg.ClientConfig = {}): pg.Client {
  const { connectionString, Client, options } = pgConnection(url);
  return new Client({ ...config, connectionString, ...(options ? { options } : {}) });
}
