import { describe, expect, it } from "vitest";
import { clientAddress, isLoopbackHost, parseTrustedProxies } from "./client-address";

const none = parseTrustedProxies(undefined);

describe("clientAddress", () => {
  it("by default the socket's address counts, whatever X-Forwarded-For says", () => {
    expect(clientAddress("127.0.0.1", "203.0.113.7", none)).toBe("127.0.0.1");
    expect(clientAddress("::ffff:192.0.2.4", "203.0.113.7", none)).toBe("192.0.2.4");
    expect(clientAddress("::1", ["203.0.113.7", "198.51.100.1"], none)).toBe("::1");
    expect(clientAddress("10.1.2.3", undefined, parseTrustedProxies("0"))).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", "203.0.113.7", parseTrustedProxies(""))).toBe("10.1.2.3");
  });

  it("a hop count reads that many entries back from the socket", () => {
    const one = parseTrustedProxies("1");
    expect(clientAddress("10.0.0.2", "203.0.113.7", one)).toBe("203.0.113.7");
    // The client prepended a spoofed entry; the one proxy appended the real one.
    expect(clientAddress("10.0.0.2", "1.1.1.1, 203.0.113.7", one)).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.2", ["1.1.1.1", "203.0.113.7"], one)).toBe("203.0.113.7");
    const two = parseTrustedProxies("2");
    expect(clientAddress("10.0.0.2", "1.1.1.1, 203.0.113.7, 10.0.0.9", two)).toBe("203.0.113.7");
    // Fewer entries than hops: the furthest address there is.
    expect(clientAddress("10.0.0.2", "203.0.113.7", two)).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.2", undefined, one)).toBe("10.0.0.2");
    // Ports and brackets as some proxies write them.
    expect(clientAddress("10.0.0.2", "203.0.113.7:51234", one)).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.2", "[2001:db8::1]:443", one)).toBe("2001:db8::1");
    // Garbage where the trusted proxy's entry should be: not an address, so the proxy's own.
    expect(clientAddress("10.0.0.2", "not-an-ip", one)).toBe("10.0.0.2");
  });

  it("CIDR ranges: the first address from the right that is not a trusted proxy", () => {
    const ranges = parseTrustedProxies("10.0.0.0/8, 127.0.0.1/32");
    expect(clientAddress("127.0.0.1", "203.0.113.7", ranges)).toBe("203.0.113.7");
    expect(clientAddress("::ffff:127.0.0.1", "203.0.113.7", ranges)).toBe("203.0.113.7");
    expect(clientAddress("127.0.0.1", "1.1.1.1, 203.0.113.7, 10.2.3.4", ranges)).toBe("203.0.113.7");
    // Not from a trusted proxy: its X-Forwarded-For is the client's own story.
    expect(clientAddress("192.0.2.9", "203.0.113.7", ranges)).toBe("192.0.2.9");
    // Every hop trusted: the leftmost.
    expect(clientAddress("127.0.0.1", "10.9.9.9", ranges)).toBe("10.9.9.9");
    expect(clientAddress("127.0.0.1", "junk, 10.9.9.9", ranges)).toBe("10.9.9.9");
    const v6 = parseTrustedProxies("::1, fd00::/8");
    expect(clientAddress("::1", "2001:db8::5, fd00::3", v6)).toBe("2001:db8::5");
  });

  it("a bad setting is refused with a message that names it", () => {
    expect(() => parseTrustedProxies("yes")).toThrow(/"yes" is neither a hop count nor an address or CIDR/);
    expect(() => parseTrustedProxies("10.0.0.0/33")).toThrow(/10.0.0.0\/33/);
    expect(() => parseTrustedProxies("99")).toThrow(/hop count/);
    expect(parseTrustedProxies("192.0.2.1")).toMatchObject({ kind: "ranges" });
  });
});

describe("isLoopbackHost: where first-run setup needs no code", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["[::1]", true],
    ["localhost", true],
    [undefined, false],
    ["0.0.0.0", false],
    ["::", false],
    ["10.0.0.5", false],
    ["reconcile.internal", false],
  ])("%s → %s", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
