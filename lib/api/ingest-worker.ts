/**
 * A worker thread of ingest-pool.ts: parses a POST /api/v1/receipts body and checks it
 * (ingest-check.ts), off the server's event loop, and sends back what the request's thread
 * would have computed. Errors travel as their API shape: a structured clone keeps only an
 * Error's message.
 */
import { parentPort } from "node:worker_threads";
import { parseJsonBytes } from "./body";
import { ApiError } from "./errors";
import { checkIngest } from "./ingest-check";
import type { CheckReply, CheckRequest, WireError } from "./ingest-pool";

const wire = (e: ApiError): WireError => ({ code: e.code, message: e.message, details: e.details });

parentPort!.on("message", async ({ id, bytes, ctx }: CheckRequest) => {
  let reply: CheckReply;
  try {
    const checked = await checkIngest(await parseJsonBytes(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)), ctx);
    reply =
      checked.kind === "single"
        ? { id, checked: { kind: "single", record: checked.record } }
        : { id, checked: { kind: "batch", valid: checked.valid, failed: checked.failed.map((f) => ({ index: f.index, error: wire(f.error) })) } };
  } catch (e) {
    reply = e instanceof ApiError ? { id, refused: wire(e) } : { id, crashed: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
  parentPort!.postMessage(reply);
});
