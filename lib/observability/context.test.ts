import { describe, expect, it } from "vitest";
import { currentRequest, notePrincipal, requestIdFrom, withRequest } from "./context";
import { logLevel } from "./log";

describe("request ids", () => {
  it("keeps a plain short id a proxy sent, and replaces anything else with a UUID", () => {
    expect(requestIdFrom("proxy-abc-123")).toBe("proxy-abc-123");
    expect(requestIdFrom("a".repeat(64))).toBe("a".repeat(64));
    for (const hostile of [undefined, "", "short", "a".repeat(65), "a b c d e f", "<script>x</script>", "id\nforged: 1", ["one-two-three", "four-five-six"]]) {
      expect(requestIdFrom(hostile)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it("the principal noted inside a request is that request's alone", async () => {
    const a = { id: "request-a-0001" };
    const b = { id: "request-b-0002" };
    await Promise.all([
      withRequest(a, async () => {
        await new Promise((r) => setTimeout(r, 5));
        notePrincipal("user-a");
      }),
      withRequest(b, async () => notePrincipal("user-b")),
    ]);
    expect([a, b]).toEqual([{ id: "request-a-0001", principalId: "user-a" }, { id: "request-b-0002", principalId: "user-b" }]);
    notePrincipal("nobody"); // outside any request: nothing to note, nothing thrown
    expect(currentRequest()).toBeUndefined();
  });
});

describe("LOG_LEVEL", () => {
  it("is one of pino's levels, info when unset or unknown", () => {
    expect(logLevel("debug")).toBe("debug");
    expect(logLevel(" WARN ")).toBe("warn");
    expect(logLevel(undefined)).toBe("info");
    expect(logLevel("loud")).toBe("info");
  });
});
