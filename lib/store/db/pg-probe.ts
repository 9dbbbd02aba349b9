import pg from "pg";
import { parsePgUrl, type PgHost, type TargetSessionAttrs } from "./pg-hosts";

/**
 * Whether one host of a multi-host DATABASE_URL fits `target_session_attrs`: the pools'
 * connection class (pg-failover.ts) asks before each new connection, and the migration engine
 * asks once for the writable host. No "server-only" here: `npm start` deploys migrations
 * before the server exists.
 */

/** Points a client (not yet connected) at `h`. */
export function pointAt(client: pg.Client, h: PgHost): void {
  const c = client as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
  c.host = c.connectionParameters.host = h.host;
  c.port = c.connectionParameters.port = h.port;
}

/** null when `host` fits; otherwise why not. */
export async function probe(config: pg.ClientConfig, host: PgHost, attrs: TargetSessionAttrs, at: (c: pg.Client, h: PgHost) => void): Promise<string | null> {
  const client = new pg.Client({ ...config, application_name: "reconcile-probe" });
  at(client, host);
  client.on("error", () => {});
  try {
    await client.connect();
    if (attrs === "any") return null;
    const r = await client.query<{ recovery: boolean; ro: string }>("SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS ro");
    const { recovery, ro } = r.rows[0];
    if (recovery) return "is a standby (in recovery)";
    if (attrs === "read-write" && ro === "on") return "is read-only (transaction_read_only on)";
    return null;
  } catch (e) {
    return `could not be used (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    await client.end().catch(() => {});
  }
}


/**
 * A one-host URL for the writable host of `url` (the URL itself when it names one host): for what
 * cannot follow a failover host by host, such as the migration engine, which parses the URL
 * itself. No writable host: an 08001 error naming each host and why.
 */
export async function writableHostUrl(url: string): Promise<string> {
  const parsed = parsePgUrl(url);
  if (parsed.hosts.length <= 1) return url;
  const why: string[] = [];
  for (const h of parsed.hosts) {
    const verdict = await probe({ connectionString: parsed.connectionString }, h, parsed.targetSessionAttrs === "any" ? "read-write" : parsed.targetSessionAttrs, pointAt);
    if (verdict === null) {
      const u = new URL(parsed.connectionString);
      u.hostname = h.host.includes(":") ? `[${h.host}]` : h.host;
      u.port = String(h.port);
      return u.toString();
    }
    why.push(`${h.host}:${h.port} ${verdict}`);
  }
  throw Object.assign(new Error(`no writable PostgreSQL host: ${why.join("; ")}`), { code: "08001" });
}
