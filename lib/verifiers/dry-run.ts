import "server-only";
import { toInstant } from "@/lib/domain/time";
import { durationMs, type VerifierDefinition, type VerifierVersion } from "@/lib/domain/verifier";
import { operationContext } from "@/lib/domain/verifier-template";
import { reader } from "@/lib/store/db/db";
import { StoreError } from "@/lib/store/errors";
import { loadOperationRecords } from "@/lib/store/chain/stage-records";
import { performCheck } from "./perform";
import { readFromCheck } from "./run";

/**
 * "Test this verifier against operation X" (VERIFIERS.md): the request (secrets masked), the
 * response (an excerpt, secrets masked) and the read it would record. Records nothing.
 */
export async function dryRun(definition: VerifierDefinition, version: number | null, operationId: string) {
  const records = (await loadOperationRecords(await reader(), [operationId])).get(operationId);
  if (!records) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
  const ctx = operationContext(operationId, records.stages);
  const performed = await performCheck(definition, ctx);
  const receiptAt = records.stages.find((s) => s.stage === "receipt")?.observed_at;
  const ns = receiptAt ? toInstant(receiptAt) : null;
  const closes = ns === null ? null : new Date(Number(ns / 1_000_000n) + durationMs(definition.window.pending_until)!).toISOString();
  const v: VerifierVersion = { name: definition.name, version: version ?? 0, tool: definition.tool, enabled: definition.enabled !== false, definition, created_at: "", created_by: "", seq: 0 };
  const read = readFromCheck(v, null, performed, { windowClosesAt: closes ?? "" });
  return {
    operation_id: operationId,
    verifier: { name: definition.name, version },
    request: performed.request,
    response:
      performed.kind === "answered"
        ? { status: performed.http_status, content_type: performed.content_type, excerpt: performed.excerpt.text, truncated: performed.excerpt.truncated, bytes: performed.excerpt.bytes, redirects: performed.redirects, ms: performed.ms }
        : null,
    error: performed.kind === "failed" ? { code: performed.code, message: performed.error } : null,
    read,
    recorded: false,
  };
}

export type DryRunResult = Awaited<ReturnType<typeof dryRun>>;
