import { findDuplicateKey } from "@/lib/domain/json";
import { ApiError } from "./errors";

export const MiB = 1024 * 1024;

/**
 * Reads a JSON request body with a hard byte limit: a declared or streamed size over the limit
 * is refused with 413 before anything is parsed; invalid UTF-8 and malformed JSON are 400.
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
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
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

function tooLarge(maxBytes: number) {
  return new ApiError("too_large", `the request body is larger than ${maxBytes / MiB} MiB`, { max_bytes: maxBytes });
}
