import { describe, expect, it } from "vitest";
import { hostAllowed, privateAddressReason } from "./address-policy";

describe("privateAddressReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private-network"],
    ["172.16.0.1", "private-network"],
    ["192.168.1.1", "private-network"],
    ["fd12:3456::1", "private-network"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private-network"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
  ])("refuses %s (%s)", (address, what) => {
    expect(privateAddressReason(address)).toContain(what);
  });

  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("allows the public address %s", (address) => {
    expect(privateAddressReason(address)).toBeNull();
  });

  it("refuses what is not an address", () => {
    expect(privateAddressReason("example.com")).toContain("not an IP address");
  });
});

describe("hostAllowed", () => {
  const list = ["api.example.com", "*.social.test", "127.0.0.1", "[::1]"];
  it("takes exact names, ignoring case and a trailing dot", () => {
    expect(hostAllowed("API.example.com", list)).toBe(true);
    expect(hostAllowed("api.example.com.", list)).toBe(true);
    expect(hostAllowed("example.com", list)).toBe(false);
    expect(hostAllowed("evil-api.example.com", list)).toBe(false);
    expect(hostAllowed("api.example.com.evil.net", list)).toBe(false);
  });
  it("takes *.domain for subdomains only", () => {
    expect(hostAllowed("a.social.test", list)).toBe(true);
    expect(hostAllowed("a.b.social.test", list)).toBe(true);
    expect(hostAllowed("social.test", list)).toBe(false);
    expect(hostAllowed("evilsocial.test", list)).toBe(false);
  });
  it("takes IP literals, IPv6 with or without brackets", () => {
    expect(hostAllowed("127.0.0.1", list)).toBe(true);
    expect(hostAllowed("::1", list)).toBe(true);
    expect(hostAllowed("[::1]", list)).toBe(true);
    expect(hostAllowed("127.0.0.2", list)).toBe(false);
  });
  it("allows nothing with an empty list", () => {
    expect(hostAllowed("api.example.com", [])).toBe(false);
  });
});
