import { describe, expect, it } from "vitest";
import { elicitationTarget, NOBODY_ASKED, type Elicit, type InFlightCall } from "./elicitation";

const asker = (answer: string): Elicit => async () => ({ action: "accept", content: { answer } });

describe("who an upstream's elicitation goes to", () => {
  it("the client of the one call in flight to that upstream, when it declared elicitation", async () => {
    const target = elicitationTarget("fs", new Set<InFlightCall>([{ elicit: asker("yes") }]));
    expect("to" in target).toBe(true);
    if ("to" in target) expect(await target.to({ message: "sure?", requestedSchema: { type: "object", properties: {} } }, new AbortController().signal)).toEqual({ action: "accept", content: { answer: "yes" } });
  });

  it("nobody when that client cannot be asked, when two calls are in flight (MCP does not say which asked), or none is", () => {
    expect(elicitationTarget("fs", new Set<InFlightCall>([{ elicit: null }]))).toEqual({ none: expect.stringContaining("did not declare the elicitation capability") });
    expect(elicitationTarget("fs", new Set<InFlightCall>([{ elicit: asker("a") }, { elicit: asker("b") }]))).toEqual({ none: expect.stringContaining("while 2 calls to it were in flight") });
    expect(elicitationTarget("fs", new Set())).toEqual({ none: expect.stringContaining("outside any call") });
    expect(elicitationTarget("fs", undefined)).toEqual({ none: expect.stringContaining("the upstream fs") });
    expect(NOBODY_ASKED).toEqual({ action: "cancel" });
  });
});
