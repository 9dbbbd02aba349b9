import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deriveOperation, type StoredStage } from "@/lib/domain/operation";
import { REASONS } from "@/lib/domain/outcomes";
import { operationRecordSchema, STAGE_KEYS } from "@/lib/domain/wire";
import { spansOf } from "./spans";
import { recordsOfSpans } from "./tool-spans";

/**
 * The copy-paste example of docs/INTEGRATIONS.md ("Copy-paste: one tool call over OTLP JSON"),
 * taken from the page itself: the body its curl command sends becomes exactly the operation the
 * page says it does, so the page cannot drift from the mapping.
 */
const page = readFileSync(path.join(import.meta.dirname, "../../docs/INTEGRATIONS.md"), "utf8");

function exampleBody(): unknown {
  const section = page.split("### Copy-paste: one tool call over OTLP JSON")[1];
  if (!section) throw new Error("docs/INTEGRATIONS.md has no copy-paste section");
  const heredoc = /<<'EOF'\n([\s\S]*?)\nEOF\n/.exec(section);
  if (!heredoc) throw new Error("the copy-paste section has no heredoc body");
  return JSON.parse(heredoc[1]);
}

describe("docs/INTEGRATIONS.md's OTLP example", () => {
  const records = recordsOfSpans(spansOf(exampleBody())).map((r) => r.record as Record<string, any>);

  it("one tool span, one record: the invoke_agent span stores nothing", () => {
    expect(records.map((r) => r.operation_id)).toEqual(["otel:4d1e00c0db4f4e6fa8b0c52c6a1f0b11:call_refund_1"]);
  });

  const [r] = records;

  it("is a record the ingest path accepts", () => {
    expect(operationRecordSchema.safeParse(r).success).toBe(true);
  });

  it("carries what the page says: tool, agent, trajectory, intent, receipt, claim", () => {
    expect(r.tool).toEqual({ name: "refund_order", type: "function" });
    expect(r.agent).toEqual({ name: "support-agent" });
    expect(r.trajectory_id).toBe("conv-5531");
    expect(r.intent).toMatchObject({ effect: "call refund_order", params: { order: "5531", amount_cents: 4200 } });
    expect(r.receipt).toMatchObject({ status: "accepted", raw: { refund_id: "rf_881", status: "issued" } });
    expect(r.claimed_outcome).toBe("success");
    expect(r.otel).toMatchObject({ convention: "gen_ai", span_name: "execute_tool refund_order" });
  });

  it("is uncertain, with the reason the page quotes, until something reads the refund back", () => {
    const envelope = Object.fromEntries(Object.entries(r).filter(([k]) => k !== "operation_id" && !(STAGE_KEYS as readonly string[]).includes(k)));
    const stages: StoredStage[] = (["intent", "receipt"] as const).map((stage, i) => ({
      seq: i + 1,
      stage,
      observed_at: r[stage].observed_at,
      recorded_at: "2026-08-29T10:00:00.000Z",
      data: r[stage],
      envelope: i === 0 ? envelope : null,
    }));
    const op = deriveOperation(r.operation_id, stages);
    expect(op.classification.outcome).toBe("uncertain");
    expect(op.classification.reason).toBe(REASONS.readUnavailable);
    expect(page).toContain(`("${REASONS.readUnavailable}")`);
  });
});
