import { describe, expect, it } from "vitest";
import { gate, recordedResult } from "./gate";

const receipt = (raw: unknown, status = "accepted") => ({ stage: "receipt", payload: { status, observed_at: "2026-12-04T10:00:00Z", raw } });

describe("the retry gate at the tool boundary", () => {
  it("replays a verified call's recorded result and says so", () => {
    const d = gate({ operation_id: "op-1", effective_outcome: "verified", stages: [{ stage: "intent" }, receipt({ structuredContent: { id: "p-9" }, text: '{"id":"p-9"}' })] }, "social.publish");
    expect(d).toEqual({ kind: "replay", text: 'already done (verified, operation op-1): {"id":"p-9"}', structured: { id: "p-9" } });
  });

  it("forwards an idempotent tool's uncertain or divergent repeat as a new attempt; verified still replays, denied still refuses", () => {
    for (const outcome of ["uncertain", "divergent"]) expect(gate({ operation_id: "op-i", effective_outcome: outcome, stages: [receipt("ok")] }, "set_value", undefined, "idempotent")).toEqual({ kind: "forward_new" });
    expect(gate({ operation_id: "op-i", effective_outcome: "uncertain", stages: [receipt("ok")] }, "set_value").kind).toBe("refuse");
    expect(gate({ operation_id: "op-i", effective_outcome: "verified", stages: [receipt("ok")] }, "set_value", undefined, "idempotent").kind).toBe("replay");
    expect(gate({ operation_id: "op-i", effective_outcome: "uncertain", approval: { status: "denied", decided_by: "r" } }, "set_value", undefined, "idempotent").kind).toBe("refuse");
  });

  it("refuses an uncertain or divergent call with the server's reason and what a person must do", () => {
    const d = gate({ operation_id: "op-2", effective_outcome: "divergent", reason: "the write was accepted but the canonical effect is absent", stages: [receipt("ok")] }, "social.publish");
    expect(d.kind).toBe("refuse");
    expect(d.kind === "refuse" && d.text).toBe(
      "not sent again: the earlier social.publish call is divergent (the write was accepted but the canonical effect is absent); a reviewer must reconcile operation op-2 in Reconcile before it may be repeated",
    );
    expect(gate({ effective_outcome: "uncertain", reason: "no receipt recorded" }, "t").kind).toBe("refuse");
    const verifying = gate({ operation_id: "op-5", effective_outcome: "uncertain", reason: "observation window open" }, "social.publish");
    expect(verifying.kind === "refuse" && verifying.text).toBe("not sent again: the earlier social.publish call is still being verified (observation window open); ask again in a few seconds, or a reviewer reconciles operation op-5");
    expect(gate({ effective_outcome: "compensated" }, "t").kind).toBe("refuse");
    expect(gate({}, "t").kind).toBe("refuse");
  });

  it("forwards a refused call, one a reviewer resolved as not applied, and one whose approval expired, as a new attempt", () => {
    expect(gate({ effective_outcome: "rejected", stages: [receipt("no", "rejected")] }, "t")).toEqual({ kind: "forward_new" });
    expect(gate({ effective_outcome: "not_applied" }, "t")).toEqual({ kind: "forward_new" });
    expect(gate({ effective_outcome: "rejected", approval: { status: "expired" } }, "t")).toEqual({ kind: "forward_new" });
  });

  it("waits on a pending approval, forwards an approved one once, and never repeats a denied one", () => {
    expect(gate({ effective_outcome: "uncertain", approval: { status: "pending" } }, "t")).toEqual({ kind: "wait" });
    expect(gate({ effective_outcome: "uncertain", approval: { status: "approved", used_at: null } }, "t")).toEqual({ kind: "use_approval" });
    const used = gate({ operation_id: "op-3", effective_outcome: "uncertain", approval: { status: "approved", used_at: "2026-12-04T10:00:00Z", used_by: "gw" } }, "billing.charge");
    expect(used.kind === "refuse" && used.text).toMatch(/already forwarded .* whether it took effect is unknown/);
    const denied = gate({ operation_id: "op-4", effective_outcome: "rejected", approval: { status: "denied", decided_by: "rev@x", reason: "too large" } }, "billing.charge");
    expect(denied).toEqual({ kind: "refuse", text: "not sent: billing.charge was denied by rev@x: too large (operation op-4)" });
  });

  it("once a receipt exists, the outcome decides, whatever the approval said", () => {
    expect(gate({ effective_outcome: "verified", approval: { status: "approved", used_at: "x" }, stages: [receipt("done")] }, "t").kind).toBe("replay");
  });

  it("refuses a caller's id that names another call, and lets a reviewer's correction decide over an approval", async () => {
    const { paramsDigest } = await import("./rules");
    const op = { operation_id: "post-1", tool: { name: "social.publish" }, effective_outcome: "verified", stages: [{ stage: "intent", payload: { params: { text: "a" } } }, receipt("done")] };
    expect(gate(op, "social.publish", { tool: "social.publish", params_digest: paramsDigest({ text: "a" }) }).kind).toBe("replay");
    const other = gate(op, "social.publish", { tool: "social.publish", params_digest: paramsDigest({ text: "b" }) });
    expect(other).toEqual({ kind: "refuse", text: "not sent: operation post-1 is another call (other arguments); send this one with a request id of its own" });
    expect(gate(op, "billing.charge", { tool: "billing.charge", params_digest: paramsDigest({ text: "a" }) })).toMatchObject({ kind: "refuse", text: expect.stringContaining("the tool social.publish") });
    // Approved and forwarded, no receipt, then a reviewer found it was not applied: it may go again.
    expect(gate({ effective_outcome: "not_applied", approval: { status: "approved", used_at: "t", used_by: "gw" } }, "t")).toEqual({ kind: "forward_new" });
  });

  it("reads back what the gateway recorded as raw", () => {
    expect(recordedResult("plain")).toEqual({ text: "plain", structured: undefined });
    expect(recordedResult({ text: "hello" })).toEqual({ text: "hello", structured: undefined });
    expect(recordedResult({ a: 1 })).toEqual({ text: '{"a":1}', structured: { a: 1 } });
  });
});
