import { describe, expect, it } from "vitest";
import { safeRedirectPath } from "./redirect";

describe("safeRedirectPath: from= is followed only to this app's own origin", () => {
  it.each([
    "/\\evil.example",
    "//evil.example",
    "///evil.example",
    "https://evil.example",
    "http://evil.example/operations",
    "\\\\evil.example",
    "/\\/evil.example",
    "/\t/evil.example",
    " //evil.example",
    "/.//evil.example",
    "/..//evil.example",
    "javascript:alert(1)",
    "data:text/html,hi",
    "http://[",
  ])("%j → /", (from) => {
    expect(safeRedirectPath(from)).toBe("/");
  });

  it.each([
    ["/operations?x=1", "/operations?x=1"],
    ["/operations/op-1#stage-2", "/operations/op-1#stage-2"],
    ["/settings/tokens", "/settings/tokens"],
    // Percent-encoded backslashes are a path segment on this origin, never another host.
    ["/%5C%5Cevil.example", "/%5C%5Cevil.example"],
    ["operations", "/operations"],
  ])("%j → %j", (from, to) => {
    expect(safeRedirectPath(from)).toBe(to);
  });

  it("nothing, or not a string, is /", () => {
    expect(safeRedirectPath(undefined)).toBe("/");
    expect(safeRedirectPath("")).toBe("/");
    expect(safeRedirectPath(["/x"])).toBe("/");
  });

  it("with the app's origin as base, an absolute URL on that origin is followed, any other is not", () => {
    expect(safeRedirectPath("http://app.example:3000/review?a=1", "http://app.example:3000")).toBe("/review?a=1");
    expect(safeRedirectPath("http://app.example:3001/review", "http://app.example:3000")).toBe("/");
    expect(safeRedirectPath("https://app.example:3000/review", "http://app.example:3000")).toBe("/");
  });
});
