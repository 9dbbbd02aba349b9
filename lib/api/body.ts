import { findDuplicateKey } from "@/lib/domain/json";
import { ApiError } from "./errors";

export const MiB = 1024 * 1024;

/**
 * How much of an over-limit body is read and thrown away before the 413 is sent. Answering while
 * the client is still uploading makes the server close a connection with unread data on it, and
 * most HTTP clients then report a reset (EPIPE/ECONNRESET) instead of the 413. Reading the rest
 * first lets them see the answer; past this, the connection is closed instead.
 */
export const DRAIN_LIMIT_BYTES = 32 * MiB;

/**
 * Reads a JSON request body with a hard byte limit: a declared or streamed size over the limit
 * is refused with 413 before anything is parsed (and nothing kept); invalid UTF-8 and malformed
 * JSON are 400.
 */
export async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  return (await readJsonBodySized(req, maxBytes)).value;
}

/** The parsed body and its size in bytes. */
export async function readJsonBodySized(req: Request, maxBytes: number): Promise<{ value: unknown; bytes: number }> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") {
    throw new ApiError("unsupported_media_type", "send the body as JSON with Content-Type: application/json", { content_type: type || null });
  }
  const declared = Number(req.headers.get("content-length"));
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        chunks.length = 0;
        await discard(reader, DRAIN_LIMIT_BYTES - size);
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  }
  if (size === 0) throw new ApiError("malformed_json", "the request body is empty; send a JSON object");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ApiError("malformed_json", "the request body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ApiError("malformed_json", `the request body is not valid JSON: ${(e as Error).message}`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) {
    throw new ApiError("malformed_json", `the key "${duplicate}" appears twice in one object; send each key once`, { path: duplicate });
  }
  return { value, bytes: size };
}

/**
 * For a request refused before its body was read (unauthenticated, forbidden, wrong type, a
 * declared length over the limit): reads and drops the body, up to DRAIN_LIMIT_BYTES, so that
 * the client reads the refusal instead of a reset.
 */
export async function discardUnreadBody(req: Request): Promise<void> {
  if (!req.body || req.bodyUsed || req.body.locked) return;
  const declared = Number(req.headers.get("content-length"));
  const reader = req.body.getReader();
  await discard(reader, Number.isFinite(declared) && declared > DRAIN_LIMIT_BYTES ? -1 : DRAIN_LIMIT_BYTES);
}

/** Reads and drops up to `budget` more bytes; a body longer than that is cancelled (the connection closes). */
async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let read = 0;
  try {
    while (read <= budget) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
  } catch {
    return; // the client went away: nothing to answer
  }
  await reader.cancel().catch(() => {});
}

function tooLarge(maxBytes: number) {
  return new ApiError("too_large", `the request body is larger than ${maxBytes / MiB} MiB`, { max_bytes: maxBytes });
}
