import { describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { REASONS, RETRY_DECISIONS } from "@/lib/domain/outcomes";
import { metaAtAnswer, metaOf, OUTCOME_META, statusAnswer, verdictAnswer, withMeta, WORDS } from "./outcome";
import { parseConfig } from "./config";
import { toolKind } from "./rules";

const tool: CallToolResult = { content: [{ type: "text", text: "published post 42" }], structuredContent: { id: "42" } };
const base = { reconcile: { url: "http://localhost:3000" }, upstreams: { x: { command: ["node", "x.js"] } } };

describe("the outcome at the boundary", () => {
  it("speaks Reconcile's own words for what it knows at answer time", () => {
    expect(WORDS.readUnavailable).toBe(REASONS.readUnavailable);
    expect(WORDS.rejected).toBe(REASONS.rejected);
    expect(WORDS.blocked).toBe(RETRY_DECISIONS.blocked);
    expect(WORDS.idempotent).toBe(RETRY_DECISIONS.idempotent);
    expect(WORDS.newOperation).toBe(RETRY_DECISIONS.rejected);
    expect(metaAtAnswer("op-1", "accepted", "write", null)).toEqual({ operation_id: "op-1", outcome: "uncertain", reason: REASONS.readUnavailable, retry: RETRY_DECISIONS.blocked, link: null });
    expect(metaAtAnswer("op-1", "rejected", "write", "L")).toMatchObject({ outcome: "rejected", reason: REASONS.rejected, link: "L" });
    expect(metaAtAnswer("op-1", "accepted", "idempotent", null).retry).toBe(RETRY_DECISIONS.idempotent);
  });

  it("takes the verdict, reason, retry decision and page from Reconcile's answer", () => {
    const meta = metaOf({ effective_outcome: "verified", outcome: "verified", reason: REASONS.verified, retry: { decision: RETRY_DECISIONS.verified }, link: "/p/default/operations/op-1" }, "op-1", "http://rc.test/");
    expect(meta).toEqual({ operation_id: "op-1", outcome: "verified", reason: REASONS.verified, retry: RETRY_DECISIONS.verified, link: "http://rc.test/p/default/operations/op-1" });
    // A link that is not a path of Reconcile's is not passed on.
    expect(metaOf({ link: "https://elsewhere.example/x" }, "op-1", "http://rc.test").link).toBeNull();
  });

  it("verified: the tool's result and a line saying so", () => {
    const meta = { operation_id: "op-1", outcome: "verified", reason: REASONS.verified, retry: RETRY_DECISIONS.verified, link: null };
    const a = verdictAnswer(tool, meta);
    expect(a.isError).toBeUndefined();
    expect(a.content).toEqual([...tool.content, { type: "text", text: `Reconcile: verified (${REASONS.verified})` }]);
    expect(a.structuredContent).toEqual(tool.structuredContent);
    expect(a._meta![OUTCOME_META]).toEqual(meta);
  });

  it("divergent: an error whose text starts with what the read found, the tool's result kept in structuredContent", () => {
    const meta = { operation_id: "op-2", outcome: "divergent", reason: REASONS.absent, retry: RETRY_DECISIONS.blocked, link: "http://rc.test/p/default/operations/op-2" };
    const a = verdictAnswer(tool, meta);
    expect(a.isError).toBe(true);
    expect((a.content![0] as { text: string }).text).toBe(
      `Reconcile: ${REASONS.absent}; the tool's answer was not borne out, so do not report it as done (operation op-2: http://rc.test/p/default/operations/op-2)`,
    );
    expect(a.structuredContent).toEqual({ id: "42" });
    // A tool without structured content: its content is kept there.
    expect(verdictAnswer({ content: [{ type: "text", text: "ok" }] }, meta).structuredContent).toEqual({ tool_result: { content: [{ type: "text", text: "ok" }] } });
  });

  it("still uncertain: the tool's result and a line that says not to build on it", () => {
    const meta = { operation_id: "op-3", outcome: "uncertain", reason: REASONS.windowOpen, retry: RETRY_DECISIONS.blocked, link: null };
    const a = verdictAnswer(tool, meta);
    expect(a.isError).toBeUndefined();
    expect((a.content!.at(-1) as { text: string }).text).toBe(`Reconcile: not verified yet (${REASONS.windowOpen}); do not build on it — ask reconcile_status later (operation op-3)`);
  });

  it("every answer keeps what the tool put in _meta", () => {
    const meta = metaAtAnswer("op-4", "accepted", "write", null);
    expect(withMeta({ ...tool, _meta: { "tool/own": 1 } }, meta)._meta).toEqual({ "tool/own": 1, [OUTCOME_META]: meta });
    expect(statusAnswer(meta)).toEqual({
      content: [{ type: "text", text: `Reconcile: operation op-4 is uncertain (${REASONS.readUnavailable}); retry: ${RETRY_DECISIONS.blocked}` }],
      structuredContent: meta,
      _meta: { [OUTCOME_META]: meta },
    });
  });
});

describe("a tool's kind", () => {
  it("its rule's kind first; else the upstream's read-only and idempotent hints when trusted; else a write", () => {
    expect(toolKind({ kind: "read" }, { readOnlyHint: false }, true)).toBe("read");
    expect(toolKind({}, { readOnlyHint: true }, true)).toBe("read");
    expect(toolKind({}, { idempotentHint: true }, true)).toBe("idempotent");
    expect(toolKind({}, { readOnlyHint: true, idempotentHint: true }, true)).toBe("read");
    expect(toolKind({}, { readOnlyHint: true }, false)).toBe("write");
    expect(toolKind({}, undefined, true)).toBe("write");
    // A rule that gates the tool keeps it a write, whatever the upstream hints.
    expect(toolKind({ critical: true }, { readOnlyHint: true }, true)).toBe("write");
    expect(toolKind({ approval: {} }, { readOnlyHint: true }, true)).toBe("write");
  });

  it("the configuration refuses a kind that is not one of the three, a read that is gated, and a wait over 60 s, naming each", () => {
    expect(() => parseConfig({ ...base, tools: { t: { kind: "delete" } } })).toThrow(/tools\.t\.kind: one of read, idempotent, write/);
    expect(() => parseConfig({ ...base, tools: { t: { kind: "read", approval: {} } } })).toThrow(/tools\.t\.kind: a read \("kind": "read"\) is never gated/);
    expect(() => parseConfig({ ...base, tools: { t: { await_verdict: "61s" } } })).toThrow(/tools\.t\.await_verdict: at most 60s/);
    expect(parseConfig({ ...base, tools: { t: { await_verdict: "5s", kind: "idempotent" } } }).tools.t).toEqual({ await_verdict: 5000, kind: "idempotent" });
    expect(parseConfig(base)).toMatchObject({ trust_annotations: true, status_tool: "reconcile_status" });
    expect(parseConfig({ ...base, status_tool: false }).status_tool).toBe(false);
    expect(() => parseConfig({ ...base, status_tool: "has space" })).toThrow(/status_tool/);
  });
});
