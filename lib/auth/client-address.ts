import ipaddr from "ipaddr.js";

/**
 * The client's address, for sign-in throttling and the audit trail's `source`.
 *
 * `X-Forwarded-For` is whatever the client wrote unless a proxy we trust stands in front and
 * appended to it, so it is ignored unless RECONCILE_TRUSTED_PROXIES says so:
 * - unset, empty or `0`: no proxy; the socket's address counts.
 * - a hop count `N` (1, 2, …): N proxies stand in front, each appending the address it saw; the
 *   client is the N-th address from the right of [X-Forwarded-For…, socket].
 * - a comma list of CIDRs (`10.0.0.0/8,127.0.0.1/32`, a bare address means /32 or /128): walking
 *   from the socket leftwards through X-Forwarded-For, the first address that is not in one of
 *   the ranges is the client.
 *
 * The production server (lib/cli/serve.ts) computes it once per request and hands it to Next.js
 * in CLIENT_ADDRESS_HEADER, after removing any copy the client sent; `sourceAddress` in
 * lib/auth/request.ts reads it.
 */
export const CLIENT_ADDRESS_HEADER = "x-reconcile-client-address";

export type TrustedProxies = { kind: "none" } | { kind: "hops"; hops: number } | { kind: "ranges"; ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] };

/** Parses RECONCILE_TRUSTED_PROXIES; throws with a message naming the bad part. */
export function parseTrustedProxies(setting: string | undefined | null): TrustedProxies {
  const text = (setting ?? "").trim();
  if (text === "" || text === "0") return { kind: "none" };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (!Number.isSafeInteger(hops) || hops > 32) throw new Error(`RECONCILE_TRUSTED_PROXIES: a hop count must be 0–32 (got ${text})`);
    return { kind: "hops", hops };
  }
  const ranges = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
      try {
        if (part.includes("/")) {
          const [addr, bits] = ipaddr.parseCIDR(part);
          return [normalize(addr), addr.kind() === "ipv6" && normalize(addr).kind() === "ipv4" ? Math.max(0, bits - 96) : bits];
        }
        const addr = normalize(ipaddr.parse(part));
        return [addr, addr.kind() === "ipv4" ? 32 : 128];
      } catch {
        throw new Error(`RECONCILE_TRUSTED_PROXIES: "${part}" is neither a hop count nor an address or CIDR range (like 10.0.0.0/8)`);
      }
    });
  if (!ranges.length) return { kind: "none" };
  return { kind: "ranges", ranges };
}

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`, how a dual-stack socket reports IPv4) as plain IPv4. */
function normalize(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/** An address as written in X-Forwarded-For (possibly with a port or IPv6 brackets), or null. */
function parseEntry(entry: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"));
  // A zone index (fe80::1%eth0) names an interface of the sender, not an address.
  text = text.replace(/%.*$/, "");
  if (!ipaddr.isValid(text)) return null;
  try {
    return normalize(ipaddr.parse(text));
  } catch {
    return null;
  }
}

function trusted(addr: ipaddr.IPv4 | ipaddr.IPv6, ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean {
  return ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range as never, bits));
}

/**
 * The client's address for one request: the socket's, unless trusted proxies say to read
 * X-Forwarded-For (all its headers, in order). Null only when the socket has no address.
 */
export function clientAddress(socketAddress: string | undefined | null, forwardedFor: string | string[] | undefined | null, proxies: TrustedProxies): string | null {
  const socket = socketAddress ? parseEntry(socketAddress) : null;
  if (!socket) return socketAddress ?? null;
  if (proxies.kind === "none" || !forwardedFor) return socket.toString();
  const entries = [forwardedFor]
    .flat()
    .join(",")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (proxies.kind === "hops") {
    // [XFF…, socket]: the proxy nearest to us is the socket; each of the N proxies appended one entry.
    const chain = [...entries, socket.toString()];
    const index = Math.max(0, chain.length - 1 - proxies.hops);
    // An entry that is not an address was written by someone we do not trust to write it: stop at
    // the last address a trusted hop vouched for.
    for (let i = index; i < chain.length; i++) {
      const addr = parseEntry(chain[i]);
      if (addr) return addr.toString();
    }
    return socket.toString();
  }
  let current = socket;
  for (let i = entries.length - 1; i >= 0 && trusted(current, proxies.ranges); i--) {
    const next = parseEntry(entries[i]);
    if (!next) break;
    current = next;
  }
  return current.toString();
}

/** Whether a listen address is reachable from this machine only (unset: all interfaces, so no). */
export function isLoopbackHost(hostname: string | undefined | null): boolean {
  if (!hostname) return false;
  if (hostname === "localhost") return true;
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  return ipaddr.isValid(host) && ipaddr.process(host).range() === "loopback";
}
