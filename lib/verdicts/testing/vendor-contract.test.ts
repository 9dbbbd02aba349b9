/**
 * The contract checks themselves (./vendor-contract.ts): each passes the request the Phoenix or
 * Langfuse client makes and fails each way a request can leave Phoenix's published API description, so a test
 * built on it fails when the vendor's contract and the request part.
 */
import { describe, expect, it } from "vitest";
import { langfuseContractErrors, langfuseEndpoints, phoenixContractErrors, type LangfuseSeen, type SeenRequest } from "./vendor-contract";

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

const keys = { publicKey: "pk-lf-1", secretKey: "sk-lf-1" };
const score: LangfuseSeen = {
  method: "POST",
  path: "/api/public/scores",
  query: {},
  headers: { authorization: `Basic ${Buffer.from("pk-lf-1:sk-lf-1").toString("base64")}`, "x-langfuse-public-key": "pk-lf-1", "content-type": "application/json" },
  body: { id: "reconcile-0123", traceId: "0af7651916cd43dd8448eb211c80319c", observationId: "b7ad6b7169203331", name: "reconcile.outcome", value: "verified", dataType: "CATEGORICAL", comment: "ok", metadata: { operation_id: "op-1" } },
};
const withBody = (over: Record<string, unknown>): LangfuseSeen => ({ ...score, body: { ...(score.body as Record<string, unknown>), ...over } });

describe("Langfuse's published API, as @langfuse/core ships it", () => {
  it("reads its endpoints from the package's own client: POST /api/public/scores takes a CreateScoreRequest", () => {
    const eps = langfuseEndpoints();
    expect(eps.length).toBeGreaterThan(50);
    expect(eps.filter((e) => e.path.test("/api/public/scores")).map((e) => [e.method, e.requestType])).toEqual([["POST", "CreateScoreRequest"]]);
  });

  it("accepts the score request, and refuses every departure from it, naming it", { timeout: 60_000 }, () => {
    expect(langfuseContractErrors([score], keys)).toEqual([]);
    const bad: [string, LangfuseSeen, RegExp][] = [
      ["a path it does not have", { ...score, path: "/api/public/score" }, /no path \/api\/public\/score$/m],
      ["a method the path does not take", { ...score, method: "PUT" }, /takes POST, not PUT/],
      ["a data type outside its enum", withBody({ dataType: "CATEGORY" }), /"CATEGORY"' is not assignable to type 'ScoreDataType/],
      ["a value of a type it does not take", withBody({ value: true }), /'boolean' is not assignable to type 'CreateScoreValue'/],
      ["a field it does not know", withBody({ observationID: "b7ad6b7169203331" }), /'"observationID"' does not exist in type 'CreateScoreRequest'/],
      ["a required field missing", withBody({ name: undefined }), /Property 'name' is missing/],
      ["other credentials", { ...score, headers: { ...score.headers, authorization: "Bearer sk-lf-1" } }, /Basic auth/],
    ];
    const errors = langfuseContractErrors(bad.map(([, r]) => r), keys);
    const text = errors.join("\n");
    for (const [what, , shape] of bad) expect(text, what).toMatch(shape);
    expect(errors.length).toBeGreaterThanOrEqual(bad.length);
  });
});
