import fc from "fast-check";

/** Hostile request shapes the endpoint fuzz families share (lib/reliability/fuzz-*.itest.ts). */

/** `n` nested arrays: `[[[…]]]`. */
export const deepArrays = (n: number) => "[".repeat(n) + "]".repeat(n);

/** An object of `n` keys (100,000 is the usual hostile size). */
export const manyKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`;

/** A path segment for an operation id: `@@OP@@` (the family's own operation), random text, or odd ones (NUL, dot segments, a slash, 300 characters, broken UTF-8). */
export const OWN_OPERATION = "@@OP@@";
export const operationIdSegment = fc.oneof(
  fc.constant(OWN_OPERATION),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom("%00", "..", "%2e%2e", "a%2Fb", "x".repeat(300), "%E0%A4%A", "op%20with%20space"),
);
