import type { IncomingMessage } from "node:http";
import type { ZodType } from "zod";
import { checkJsonShape, scanDuplicateKey } from "@/lib/domain/json";
import { parseRecordsInPieces } from "@/lib/domain/json-split";
import { pacer } from "@/lib/store/db/pace";
import { ApiError, validated } from "./errors";

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
  checkContentType(req.headers.get("content-type"));
  const body = await readBodyBytes(req, maxBytes);
  return { value: await parseJsonBytes(body), bytes: body.length };
}

/** The body's bytes, with the same hard limit: a declared or streamed size over it is 413 (the rest is drained, nothing kept). */
export async function readBodyBytes(req: Request, maxBytes: number): Promise<Buffer> {
  checkDeclaredLength(req.headers.get("content-length"), maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
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
  return Buffer.concat(chunks, size);
}

/** readJsonBodySized for a Node request (the ingest fast path, lib/cli/serve.ts); same answers. */
export async function readJsonBodyNode(req: IncomingMessage, maxBytes: number): Promise<{ value: unknown; bytes: number }> {
  checkContentType(req.headers["content-type"] ?? null);
  checkDeclaredLength(req.headers["content-length"] ?? null, maxBytes);
  const { chunks, size, overflow } = await new Promise<{ chunks: Buffer[]; size: number; overflow: boolean }>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let overflow = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (overflow) {
        // Read and drop the rest (up to the drain limit) so that the client reads the 413.
        if (size > DRAIN_LIMIT_BYTES) req.pause();
        return;
      }
      if (size > maxBytes) {
        overflow = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    // A client that goes away mid-upload gets no answer anyway; 400 keeps it out of the error log.
    const cutOff = () => new ApiError("bad_request", "the request body ended before its end (the connection was closed)");
    req.on("end", () => resolve({ chunks, size, overflow }));
    req.on("error", () => (overflow ? resolve({ chunks, size, overflow }) : reject(cutOff())));
    req.on("close", () => {
      if (!req.readableEnded) overflow ? resolve({ chunks, size, overflow }) : reject(cutOff());
    });
    // Past the drain limit the reads stop; answer then rather than wait for an end that will not come.
    req.on("pause", () => overflow && resolve({ chunks, size, overflow }));
  });
  if (overflow) throw tooLarge(maxBytes);
  return { value: await parseJsonBytes(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)), bytes: size };
}

export function checkContentType(header: string | null) {
  const type = (header ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") {
    throw new ApiError("unsupported_media_type", "send the body as JSON with Content-Type: application/json", { content_type: type || null });
  }
}

function checkDeclaredLength(header: string | null, maxBytes: number) {
  const declared = Number(header);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
}

/** Bodies from this size on are parsed in pieces (lib/domain/json-split.ts). */
const PIECES_FROM_CHARS = 256 * 1024;

/** UTF-8 (strict), JSON, and each key once per object: 400 malformed_json otherwise. */
export async function parseJsonBytes(bytes: Buffer): Promise<unknown> {
  if (bytes.length === 0) throw new ApiError("malformed_json", "the request body is empty; send a JSON object");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("malformed_json", "the request body is not valid UTF-8");
  }
  let value: unknown;
  try {
    // A large batch is parsed record by record, letting others in every few milliseconds.
    value = text.length < PIECES_FROM_CHARS ? JSON.parse(text) : await parseRecordsInPieces(text, pacer(10));
  } catch (e) {
    throw new ApiError("malformed_json", `the request body is not valid JSON: ${(e as Error).message}`);
  }
  // The scan is ours and linear, but long on a 4 MiB body: in slices, letting others in between.
  const scan = scanDuplicateKey(text);
  let step = scan.next();
  while (!step.done) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    step = scan.next();
  }
  const duplicate = step.value;
  if (duplicate !== null) {
    throw new ApiError("malformed_json", `the key "${duplicate}" appears twice in one object; send each key once`, { path: duplicate });
  }
  return value;
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

/**
 * discardUnreadBody for a Node request: reads and drops the body up to DRAIN_LIMIT_BYTES before
 * a refusal is sent; a longer one is left unread (the answer then closes the connection).
 */
export function discardNode(req: IncomingMessage): Promise<void> {
  const declared = Number(req.headers["content-length"]);
  if (req.readableEnded || req.destroyed || (Number.isFinite(declared) && declared > DRAIN_LIMIT_BYTES)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let read = 0;
    req.on("data", (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_LIMIT_BYTES) {
        req.pause();
        resolve();
      }
    });
    req.on("end", () => resolve());
    req.on("close", () => resolve());
    req.on("error", () => resolve());
    req.resume();
  });
}

export function tooLarge(maxBytes: number) {
  return new ApiError("too_large", `the request body is larger than ${maxBytes / MiB} MiB`, { max_bytes: maxBytes });
}

/**
 * A JSON body read (at most `maxBytes`), shape-checked when `depth` is given (no deeper nesting,
 * no huge containers) and validated by `schema`; any refusal is the API's invalid_request naming
 * each problem's path. What the small JSON routes (corrections, notes, claims) share.
 */
export async function readValidBody<T>(req: Request, schema: ZodType<T>, opts: { maxBytes: number; depth?: number }): Promise<T> {
  const body = await readJsonBody(req, opts.maxBytes);
  if (opts.depth !== undefined) {
    const shape = checkJsonShape(body, opts.depth);
    if (shape) throw new ApiError("invalid_request", `${shape.path}: ${shape.message}`, [shape]);
  }
  return validated(schema, body);
}
