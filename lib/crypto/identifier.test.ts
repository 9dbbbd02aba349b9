import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { identifierDigest } from "./identifier";

describe("identifierDigest", () => {
  it("is sha256: and 16 hex digits of SHA-256 over the trimmed, lower-cased identifier", () => {
    const full = createHash("sha256").update("hunter2 my password", "utf8").digest("hex");
    expect(identifierDigest("  Hunter2 My Password ")).toBe(`sha256:${full.slice(0, 16)}`);
    expect(identifierDigest("x".repeat(10_000))).toMatch(/^sha256:[0-9a-f]{16}$/);
  });
});
