import { describe, expect, it } from "vitest";
import { operationIdSchema } from "@/lib/domain/wire";
import { operationIdProblem, operationPath } from "./src/operation-id";

/** Ids at the edges of what can name an operation, including what a URL would rewrite. */
const SAMPLES = [
  "post-42",
  "gw:abc:1",
  "a~2",
  ".",
  "..",
  "...",
  ".a",
  "%2e",
  "%2e%2e",
  "a/b",
  "a b",
  "a?b",
  "a#b",
  "a\\b",
  "\u2024\u2024", // one-dot leaders
  "\uff0e\uff0e", // full-width full stops
  "\u3002",
  "tab\there",
  "nul\u0000",
  "del\u007f",
  "lone\ud800",
  "é-ok",
  "",
  "x".repeat(200),
  "x".repeat(201),
  "x".repeat(10_000),
];

describe("which strings can name an operation", () => {
  it("the client refuses exactly what the server refuses", () => {
    for (const id of SAMPLES) expect(operationIdProblem(id) === null, JSON.stringify(id)).toBe(operationIdSchema.safeParse(id).success);
  });

  it("never . or .. (a URL's path steps), nor what a URL would decode into one", () => {
    expect(operationIdProblem(".")).toMatch(/must not be \. or \.\./);
    expect(operationIdProblem("..")).toMatch(/must not be \. or \.\./);
    expect(operationIdProblem("%2e")).toMatch(/printable, without spaces or/);
    expect(operationIdProblem("a/..")).toMatch(/printable, without spaces or/);
    expect(operationIdProblem("...")).toBeNull();
  });

  it("an id's URL path is its own: no dot step, no delimiter, and unicode dots stay what they are", () => {
    const base = "http://reconcile.test";
    for (const id of ["post-42", "...", "\uff0e\uff0e", "\u2024\u2024", "é-ok", "gw:a:1"]) {
      const url = new URL(base + operationPath(id));
      expect(url.pathname.startsWith("/api/v1/operations/"), id).toBe(true);
      expect(decodeURIComponent(url.pathname.slice("/api/v1/operations/".length)), id).toBe(id);
    }
    for (const id of [".", "..", "%2e", "a/b", "x".repeat(201), "c\u0001"]) expect(() => operationPath(id), JSON.stringify(id)).toThrow(TypeError);
  });
});
