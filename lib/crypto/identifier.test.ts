import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { identifierDigest } from "./identifier";

describe("identifierDigest", () => {
  it("is hmac: and 16 hex digits of HMAC-SHA-256, keyed from the server's secret, over the trimmed, lower-cased identifier", () => {
    const key = createHmac("sha256", "secret-one").update("reconcile identifier digest v1").digest();
    const full = createHmac("sha256", key).update("summer2024!", "utf8").digest("hex");
    expect(identifierDigest("  Summer2024! ", "secret-one")).toBe(`hmac:${full.slice(0, 16)}`);
    expect(identifierDigest("x".repeat(10_000), "secret-one")).toMatch(/^hmac:[0-9a-f]{16}$/);
  });

  it("equal inputs match within one instance; without its secret, a dictionary of plain SHA-256 finds nothing", () => {
    expect(identifierDigest("Summer2024!", "secret-one")).toBe(identifierDigest("summer2024!", "secret-one"));
    expect(identifierDigest("Summer2024!", "secret-one")).not.toBe(identifierDigest("Summer2024!", "secret-two"));
    const unsalted = createHash("sha256").update("summer2024!").digest("hex").slice(0, 16);
    expect(identifierDigest("Summer2024!", "secret-one")).not.toContain(unsalted);
  });

  it("takes the server's secret by default", () => {
    const before = process.env.AUTH_SECRET;
    process.env.AUTH_SECRET = "secret-three";
    try {
      expect(identifierDigest("Summer2024!")).toBe(identifierDigest("Summer2024!", "secret-three"));
    } finally {
      if (before === undefined) delete process.env.AUTH_SECRET;
      else process.env.AUTH_SECRET = before;
    }
  });
});
