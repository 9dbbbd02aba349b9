/**
 * The contract check itself (./vendor-contract.ts): it passes the request the Phoenix client
 * makes and fails each way a request can leave Phoenix's published API description, so a test
 * built on it fails when the vendor's contract and the request part.
 */
import { describe, expect, it } from "vitest";
import { phoenixContractErrors, type SeenRequest } from "./vendor-contract";

const good: SeenRequest = {
  method: "POST",
  path: "/v1/span_annotations",
  query: { sync: false },
  body: { data: [{ span_id: "a1b2c3d4e5f6a7b8", name: "reconcile.outcome", annotator_kind: "CODE", result: { label: "verified", score: 1, explanation: "ok" }, metadata: { operation_id: "op-1" }, identifier: "op-1" }] },
};
const entry = (over: Record<string, unknown>) => ({ ...good, body: { data: [{ ...(good.body as { data: Record<string, unknown>[] }).data[0], ...over }] } });

describe("Phoenix's published API description, as its client ships it", () => {
  it("accepts the span annotation request, and refuses every departure from it, naming it", { timeout: 60_000 }, () => {
    expect(phoenixContractErrors([good])).toEqual([]);
    const bad: [string, SeenRequest, RegExp][] = [
      ["a path it does not have", { ...good, path: "/v1/span_annotation" }, /span_annotation/],
      ["a method the path does not take", { ...good, method: "PUT" }, /requestBody|undefined|never/],
      ["an annotator kind outside its enum", entry({ annotator_kind: "ROBOT" }), /ROBOT/],
      ["a required field missing", entry({ span_id: undefined }), /span_id/],
      ["a field it does not know", entry({ identifer: "op-1" }), /identifer/],
      ["a score that is no number", entry({ result: { label: "verified", score: "1" } }), /score|string/],
      ["a query parameter it does not know", { ...good, query: { sync: false, wait: true } }, /wait/],
    ];
    const errors = phoenixContractErrors(bad.map(([, r]) => r));
    const text = errors.join("\n");
    for (const [what, , shape] of bad) expect(text, what).toMatch(shape);
    expect(errors.length).toBeGreaterThanOrEqual(bad.length);
  });
});
