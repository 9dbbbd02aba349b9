/**
 * PostgreSQL connection strings naming several hosts, as libpq writes them
 * (`postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write`). The `pg` driver
 * parses only one host: this reads the list, and gives pg a string naming the first host and
 * without `target_session_attrs` (which pg does not know); pg-deadline.ts's connection factory
 * then tries each host in turn (docs/DEPLOY.md, "Failover"). Pure: no I/O.
 */

export type PgHost = { host: string; port: number };

/**
 * libpq's values we honour. `any`: the first host that accepts a connection. `read-write` and
 * `primary`: the first that is not a standby (pg_is_in_recovery() false) and, for read-write,
 * whose transaction_read_only is off. The standby-seeking ones are refused: the application writes.
 */
export type TargetSessionAttrs = "any" | "read-write" | "primary";
const ATTRS: readonly string[] = ["any", "read-write", "primary"];

export type PgUrl = {
  /** Empty when the URL names none (a socket directory in `?host=`): pg reads it as it is. */
  hosts: PgHost[];
  targetSessionAttrs: TargetSessionAttrs;
  /** The URL with the first host only and without target_session_attrs: what pg parses. */
  connectionString: string;
};

const DEFAULT_PORT = 5432;

export function parsePgUrl(url: string): PgUrl {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (!m) throw new Error("a PostgreSQL URL must start with postgresql:// or postgres://");
  const [, scheme, authority, rest] = m;
  const at = authority.lastIndexOf("@");
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : "";
  const hostList = at >= 0 ? authority.slice(at + 1) : authority;
  // No host at all (`postgresql:///db?host=/socket/dir`): pg's to read, as it always was.
  if (!hostList) return { hosts: [], targetSessionAttrs: "any", connectionString: url };
  const hosts = splitHosts(hostList).map(parseHost);

  // The path and the query: target_session_attrs taken out, the rest kept as written.
  const q = rest.indexOf("?");
  const path = q >= 0 ? rest.slice(0, q) : rest;
  const params = q >= 0 ? rest.slice(q + 1).split("&").filter(Boolean) : [];
  let attrs: string = "any";
  const kept: string[] = [];
  for (const p of params) {
    const eq = p.indexOf("=");
    const key = decodeURIComponent(eq >= 0 ? p.slice(0, eq) : p);
    if (key !== "target_session_attrs") {
      kept.push(p);
      continue;
    }
    attrs = decodeURIComponent(eq >= 0 ? p.slice(eq + 1) : "");
    if (!ATTRS.includes(attrs)) throw new Error(`target_session_attrs=${JSON.stringify(attrs)} is not supported: use ${ATTRS.join(", ")}`);
  }
  const first = hosts[0];
  const hostText = first.host.includes(":") ? `[${first.host}]` : first.host;
  const explicitPort = hosts.length > 1 || attrs !== "any" || /:\d+$/.test(hostList);
  const connectionString = `${scheme}${userinfo}${hostText}${explicitPort ? `:${first.port}` : ""}${path}${kept.length ? `?${kept.join("&")}` : ""}`;
  return { hosts, targetSessionAttrs: attrs as TargetSessionAttrs, connectionString };
}

/** Commas outside brackets: `[::1]:5432,h2`. */
function splitHosts(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of list) {
    if (ch === "[") depth++;
    if (ch === "]") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (depth !== 0) throw new Error("an IPv6 host in the URL misses its closing ]");
  out.push(cur);
  return out;
}

function parseHost(text: string, i: number): PgHost {
  if (!text) throw new Error(`host ${i + 1} of the PostgreSQL URL is an empty host`);
  let host: string;
  let port: string | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    host = text.slice(1, close);
    const after = text.slice(close + 1);
    if (after && !after.startsWith(":")) throw new Error(`host ${i + 1} of the PostgreSQL URL: an IPv6 host must be [address] or [address]:port`);
    port = after ? after.slice(1) : undefined;
  } else {
    const colon = text.lastIndexOf(":");
    host = colon >= 0 ? text.slice(0, colon) : text;
    port = colon >= 0 ? text.slice(colon + 1) : undefined;
  }
  if (!host) throw new Error(`host ${i + 1} of the PostgreSQL URL is an empty host`);
  if (port === undefined) return { host: decodeURIComponent(host), port: DEFAULT_PORT };
  const n = /^\d{1,5}$/.test(port) ? Number(port) : NaN;
  if (!(n >= 1 && n <= 65535)) throw new Error(`host ${i + 1} of the PostgreSQL URL has port ${JSON.stringify(port)}: a port is 1 to 65535`);
  return { host: decodeURIComponent(host), port: n };
}

/**
 * The `schema` parameter taken out of a PostgreSQL URL (null when none, or `public`). Only a
 * plain lower-case name is accepted: it goes into the connection's options unquoted.
 */
export function withoutSchema(url: string): { url: string; schema: string | null } {
  const m = /^([^?]*)\?(.*)$/.exec(url);
  if (!m) return { url, schema: null };
  let schema: string | null = null;
  const kept = m[2].split("&").filter((pair) => {
    if (!pair.startsWith("schema=")) return true;
    schema = decodeURIComponent(pair.slice("schema=".length));
    return false;
  });
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`DATABASE_URL: schema=${schema} is not a plain lower-case name`);
  return { url: kept.length ? `${m[1]}?${kept.join("&")}` : m[1], schema: schema === "public" ? null : schema };
}


