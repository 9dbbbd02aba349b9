import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { encodeJsonRequest } from "./decode";
import { MAX_VALUES, precheck, PRECHECK_FROM_BYTES } from "./precheck";

const fixture = () => JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures", "vercel-ai.json"), "utf8"));

/** A fixture whose first span carries one attribute: an array of `n` empty values (2 bytes each in protobuf). */
function withEmptyValues(n: number) {
  const f = fixture();
  f.resourceSpans[0].scopeSpans[0].spans[0].attributes.push({ key: "many", value: { arrayValue: { values: Array.from({ length: n }, () => ({})) } } });
  return f;
}

describe("the precheck of large bodies (a worker thread counts the values)", () => {
  it("a body of more values than allowed is refused, in either encoding", async () => {
    const f = withEmptyValues(MAX_VALUES + 10);
    const proto = Buffer.from(encodeJsonRequest(f));
    expect(proto.length).toBeGreaterThan(PRECHECK_FROM_BYTES);
    expect(await precheck(proto, "protobuf")).toEqual({ ok: false, reason: expect.stringMatching(/more than 1,000,000 spans, attributes and attribute values/) });
    expect((await precheck(Buffer.from(JSON.stringify(f)), "json")).ok).toBe(false);
  });

  it("a large body of few values goes on", async () => {
    const f = fixture();
    f.resourceSpans[0].scopeSpans[0].spans[0].attributes.push({ key: "big", value: { stringValue: "x".repeat(2 * PRECHECK_FROM_BYTES) } });
    expect(await precheck(Buffer.from(encodeJsonRequest(f)), "protobuf")).toEqual({ ok: true });
    expect(await precheck(Buffer.from(JSON.stringify(f)), "json")).toEqual({ ok: true });
  });

  it("an undecodable large body goes on (the decoding after it says why)", async () => {
    expect(await precheck(Buffer.alloc(PRECHECK_FROM_BYTES + 1, 0xff), "protobuf")).toEqual({ ok: true });
  });
});
