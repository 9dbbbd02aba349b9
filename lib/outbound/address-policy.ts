import ipaddr from "ipaddr.js";

/**
 * Which resolved addresses an outbound request may reach (VERIFIERS.md "No SSRF"): pure rules,
 * used inside the socket's DNS lookup so that the address checked is the address connected to.
 */

/** ipaddr.js range names that are never a public Internet host. */
const NOT_PUBLIC = new Set([
  "unspecified",
  "broadcast",
  "multicast",
  "linkLocal",
  "loopback",
  "carrierGradeNat",
  "private",
  "reserved",
  "uniqueLocal",
  "benchmarking",
  "amt",
  "as112",
  "as112v6",
  "deprecated",
  "orchid2",
  "droneRemoteIdProtocolEntityTags",
  "6to4",
  "teredo",
  "rfc6145",
  "rfc6052",
  "discard",
]);

/** Cloud metadata services, named apart because they are the classic target. */
const METADATA = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"];

/**
 * Why an address may not be reached without the private allowance, or null when it is a public
 * address. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function privateAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return "it is not an IP address";
  }
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const text = parsed.toString();
  if (METADATA.includes(text)) return "it is a cloud metadata address";
  const range = parsed.range();
  if (range === "unicast") return null;
  if (NOT_PUBLIC.has(range)) return `it is a ${describe(range)} address`;
  // Any range ipaddr.js names that is not plain unicast is special-purpose: refuse it too.
  return `it is a special-purpose (${range}) address`;
}

function describe(range: string): string {
  switch (range) {
    case "loopback":
      return "loopback";
    case "private":
    case "uniqueLocal":
      return "private-network";
    case "linkLocal":
      return "link-local";
    case "unspecified":
      return "unspecified";
    default:
      return `special-purpose (${range})`;
  }
}

/**
 * Whether `host` (a URL's hostname, lowercased, IPv6 without brackets) is in the allowlist.
 * Entries are exact host names or IP literals, or `*.example.com` for any subdomain (not the
 * bare domain). Trailing dots are ignored.
 */
export function hostAllowed(host: string, allowHosts: readonly string[]): boolean {
  const h = normalHost(host);
  for (const raw of allowHosts) {
    const entry = normalHost(raw.trim());
    if (!entry) continue;
    if (entry.startsWith("*.")) {
      const suffix = entry.slice(1);
      if (h.endsWith(suffix) && h.length > suffix.length) return true;
    } else if (h === entry) return true;
  }
  return false;
}

/** Lower case, no trailing dot, IPv6 without brackets; IP literals in one spelling (::ffff:127.0.0.1 = ::ffff:7f00:1). */
function normalHost(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, "").replace(/^\[|\]$/g, "");
  return ipaddr.isValid(h) && h.includes(":") ? ipaddr.parse(h).toNormalizedString() : h;
}
