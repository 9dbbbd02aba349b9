/**
 * An OTLP/HTTP logs receiver for the verdict tests: it takes POST /v1/logs in protobuf and
 * decodes each request with protobufjs against opentelemetry-proto's own messages (below, from
 * `opentelemetry/proto/{common,resource,logs}/v1/*.proto` and
 * `collector/logs/v1/logs_service.proto`, the fields the exporter writes, with their numbers).
 * `@opentelemetry/otlp-transformer` has no logs decoder in any version installed here (0.215's
 * generated types cover traces and metrics, 0.301 only encodes), so the definitions are read
 * from proto text rather than generated; nothing reads protobuf bytes by hand. It keeps every log
 * record with its trace and span ids as hex. `answer` decides each request's status (a receiver
 * that is down for a while).
 */
import http from "node:http";
import protobuf from "protobufjs";

const PROTO = `
syntax = "proto3";
package opentelemetry.proto;
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message LogRecord {
  fixed64 time_unix_nano = 1;
  fixed64 observed_time_unix_nano = 11;
  int32 severity_number = 2;
  string severity_text = 3;
  AnyValue body = 5;
  repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7;
  fixed32 flags = 8;
  bytes trace_id = 9;
  bytes span_id = 10;
  string event_name = 12;
}
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
`;
const Request = protobuf.parse(PROTO).root.lookupType("opentelemetry.proto.ExportLogsServiceRequest");

export type ReceivedEvent = {
  eventName: string | undefined;
  traceId: string;
  spanId: string;
  timeUnixNano: string;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  /** The request's headers (lower-case names). */
  headers: http.IncomingHttpHeaders;
};

export type LogsReceiver = {
  url: string;
  events: ReceivedEvent[];
  requests: { status: number; bytes: Buffer }[];
  /** The status of every request from now on, or a function of the request's number (from 0). */
  answer: (status: number | ((n: number) => number)) => void;
  close: () => Promise<void>;
};

// int64 comes as text (longs: String); the SDK sends a whole number as intValue, others as doubleValue.
const valueOf = (v: Record<string, unknown>) => (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue) as string | number | boolean;
const attrs = (list: { key: string; value: Record<string, unknown> }[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));
const hex = (b: unknown) => (b ? Buffer.from(b as Uint8Array).toString("hex") : "");

export async function startLogsReceiver(): Promise<LogsReceiver> {
  let answer: number | ((n: number) => number) = 200;
  const events: ReceivedEvent[] = [];
  const requests: LogsReceiver["requests"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const bytes = Buffer.concat(chunks);
      const status = typeof answer === "number" ? answer : answer(requests.length);
      requests.push({ status, bytes });
      if (req.url !== "/v1/logs" || status !== 200) return res.writeHead(req.url !== "/v1/logs" ? 404 : status, { "content-type": "text/plain" }).end("not now");
      const body = Request.toObject(Request.decode(bytes), { longs: String, defaults: false }) as any;
      for (const rl of body.resourceLogs ?? []) {
        const resource = attrs(rl.resource?.attributes);
        for (const sl of rl.scopeLogs ?? []) {
          for (const r of sl.logRecords ?? []) {
            events.push({ eventName: r.eventName, traceId: hex(r.traceId), spanId: hex(r.spanId), timeUnixNano: String(r.timeUnixNano ?? ""), attributes: attrs(r.attributes), resource, headers: req.headers });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    requests,
    answer: (a) => (answer = a),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
