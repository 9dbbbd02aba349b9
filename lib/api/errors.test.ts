import { describe, expect, it } from "vitest";
import { StoreError } from "@/lib/store/errors";
import { ApiError, errorAnswer, knownError } from "./errors";

describe("the store's refusals as the API answers them", () => {
  it.each([
    ["invalid_input", 422, "invalid_request"],
    ["not_found", 404, "not_found"],
    ["conflict", 409, "conflict"],
    ["claimed_by_other", 409, "claimed_by_other"],
    ["forbidden", 403, "forbidden"],
    ["overloaded", 429, "overloaded"],
    ["internal", 500, "internal"],
    ["verify_scope_required", 403, "verify_scope_required"],
    ["not_operation_owner", 403, "not_operation_owner"],
    ["observed_in_future", 422, "observed_in_future"],
    ["too_many_reads", 422, "too_many_reads"],
  ] as const)("%s → %i %s, with the store's message and details", (kind, status, code) => {
    const answer = errorAnswer(new StoreError(kind, "what happened", { a: 1 }));
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ error: { code, message: "what happened", details: { a: 1 } } });
  });

  it("a wait the store names becomes Retry-After; no details, no details key", () => {
    const answer = errorAnswer(new StoreError("overloaded", "busy", undefined, { retryAfterSeconds: 7 }));
    expect(answer.headers["retry-after"]).toBe("7");
    expect(answer.body).toEqual({ error: { code: "overloaded", message: "busy" } });
  });

  it("an ApiError is known as itself; anything else is not known", () => {
    const e = new ApiError("busy", "one at a time");
    expect(knownError(e)).toBe(e);
    expect(knownError(new Error("database gone"))).toBeNull();
    expect(knownError("text")).toBeNull();
  });
});
