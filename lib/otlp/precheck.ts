import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Encoding } from "./decode";

/**
 * Decoding is one synchronous step, and its cost is the number of values in the body, not its
 * size: 16 MiB of empty attribute values (8.4 million of them, 16 KB gzipped) held the event
 * loop for 8 s and took 0.9 GiB of memory. So a large body is first decoded in a worker thread,
 * on the other core and with its own memory limit, which only counts the values; the request
 * goes on (decoded again, on the main thread) only when there are few enough. Small bodies skip
 * this: they cannot hold enough values to matter.
 */
export const PRECHECK_FROM_BYTES = 1024 * 1024;
/** Spans, attributes and attribute values (each array element, each key-value pair) in one request. */
export const MAX_VALUES = 1_000_000;
const WORKER_HEAP_MB = 256;

export type Precheck = { ok: true } | { ok: false; reason: string };

/** The worker, as plain JavaScript (it runs outside any bundler): decode, then count until the limit. */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { body, encoding, rootPath, limit } = workerData;
let values = 0;
const over = () => ++values > limit;
function countAny(v, depth) {
  if (!v || typeof v !== "object" || depth > 64) return false;
  if (over()) return true;
  const list = (v.arrayValue && v.arrayValue.values) || (v.kvlistValue && v.kvlistValue.values) || null;
  if (!Array.isArray(list)) return false;
  for (const x of list) if (countAny(v.kvlistValue ? x && x.value : x, depth + 1)) return true;
  return false;
}
function countAttrs(attrs) {
  if (!Array.isArray(attrs)) return false;
  for (const kv of attrs) if (over() || countAny(kv && kv.value, 0)) return true;
  return false;
}
function count(req) {
  for (const rs of (req && req.resourceSpans) || []) {
    if (countAttrs(rs && rs.resource && rs.resource.attributes)) return true;
    for (const ss of (rs && rs.scopeSpans) || []) for (const s of (ss && ss.spans) || []) {
      if (over() || countAttrs(s && s.attributes)) return true;
      for (const e of (s && s.events) || []) if (over() || countAttrs(e && e.attributes)) return true;
      for (const l of (s && s.links) || []) if (over() || countAttrs(l && l.attributes)) return true;
    }
  }
  return false;
}
let req = null;
let decoded = true;
try {
  req = encoding === "json"
    ? JSON.parse(Buffer.from(body).toString("utf8"))
    : require(rootPath).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.decode(new Uint8Array(body));
} catch (e) {
  decoded = false; // not decodable: the main thread's decoding says why, cheaply (it fails the same way)
}
let answer = { ok: true };
if (decoded) {
  try {
    if (count(req)) answer = { ok: false, reason: "more than " + limit.toLocaleString("en") + " spans, attributes and attribute values in one request" };
  } catch (e) {
    answer = { ok: false, reason: "the request's values nest too deeply to count" };
  }
}
parentPort.postMessage(answer);
`;

let rootPath: string | null = null;
/** One precheck at a time: each may take a core and its memory limit. */
let chain: Promise<unknown> = Promise.resolve();

export function precheck(body: Buffer, encoding: Encoding): Promise<Precheck> {
  if (body.length < PRECHECK_FROM_BYTES) return Promise.resolve({ ok: true });
  rootPath ??= createRequire(`${process.cwd()}/`).resolve("@opentelemetry/otlp-transformer/build/src/generated/root.js");
  const run = chain.then(() => runWorker(body, encoding, rootPath!));
  chain = run.catch(() => undefined);
  return run;
}

function runWorker(body: Buffer, encoding: Encoding, root: string): Promise<Precheck> {
  return new Promise((resolve) => {
    // The body is copied into the worker (the request still needs its own).
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { body: new Uint8Array(body), encoding, rootPath: root, limit: MAX_VALUES },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    let answered = false;
    worker.once("message", (m: Precheck) => {
      answered = true;
      resolve(m);
      void worker.terminate();
    });
    worker.once("error", () => {
      // Out of its memory (ERR_WORKER_OUT_OF_MEMORY) or its stack: too many values to decode here.
      answered = true;
      resolve({ ok: false, reason: `decoding the request needs more than ${WORKER_HEAP_MB} MiB: too many values in one request` });
    });
    worker.once("exit", () => {
      if (!answered) resolve({ ok: false, reason: "the request could not be decoded within its limits" });
    });
  });
}
