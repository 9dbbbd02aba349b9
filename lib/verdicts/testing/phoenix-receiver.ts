/**
 * A stand-in for a Phoenix server (which cannot run here) for lib/verdicts/phoenix.itest.ts: it
 * records each request the official client makes (method, path, query, headers, JSON body) and
 * answers as Phoenix's API description says (200 with `{data: [{id}]}` for span annotations),
 * 401 when the Bearer key is not the one it was given, or the status the test sets. The requests
 * are checked against Phoenix's own description afterwards (./vendor-contract.ts).
 */
import http from "node:http";
import type { SeenRequest } from "./vendor-contract";

export type PhoenixRequest = SeenRequest & { headers: http.IncomingHttpHeaders; status: number };

export type PhoenixReceiver = {
  url: string;
  requests: PhoenixRequest[];
  /** The annotations accepted, in order. */
  annotations: Record<string, any>[];
  answer: (status: number | null) => void;
  close: () => Promise<void>;
};

export async function startPhoenixReceiver(apiKey: string): Promise<PhoenixReceiver> {
  let forced: number | null = null;
  const requests: PhoenixRequest[] = [];
  const annotations: Record<string, any>[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const u = new URL(req.url ?? "/", "http://phoenix");
      const query = Object.fromEntries([...u.searchParams].map(([k, v]) => [k, v === "true" ? true : v === "false" ? false : v]));
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = Buffer.concat(chunks).toString("utf8");
      }
      const authorized = req.headers.authorization === `Bearer ${apiKey}`;
      const status = forced ?? (!authorized ? 401 : u.pathname === "/v1/span_annotations" && req.method === "POST" ? 200 : 404);
      requests.push({ method: req.method ?? "", path: u.pathname, query, body, headers: req.headers, status });
      if (status !== 200) return res.writeHead(status, { "content-type": "text/plain" }).end(status === 401 ? "Invalid token" : "no");
      for (const a of body.data) annotations.push(a);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: body.data.map((_: unknown, i: number) => ({ id: `SpanAnnotation:${annotations.length - body.data.length + i + 1}` })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    annotations,
    answer: (s) => (forced = s),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
