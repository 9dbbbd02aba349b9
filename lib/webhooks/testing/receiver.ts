/**
 * A webhook receiver for tests and the benchmark: a real HTTP server on 127.0.0.1 that checks
 * every signature with the Standard Webhooks library itself (`standardwebhooks`), records what
 * arrived, and answers as told per path (200, a status, a Retry-After, or hanging).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export type Received = {
  path: string;
  id: string;
  timestamp: string;
  /** The library verified the signature against the path's secret. */
  verified: boolean;
  /** The parsed body (the event, or Slack's {text}). */
  body: { type?: string; timestamp?: string; data?: Record<string, unknown>; text?: string };
  raw: string;
  /** The request's headers (lower-case names), to verify again with another secret. */
  headers: Record<string, string>;
  at: number;
};

export type Answer = { status: number; retryAfter?: string; body?: string } | "hang";

export type Receiver = {
  url: (path: string) => string;
  port: number;
  received: Received[];
  /** The secret a path's requests are verified with. */
  secrets: Map<string, string>;
  /** How a path answers (default 200); a function sees how many requests that path had before. */
  answers: Map<string, Answer | ((n: number) => Answer)>;
  close: () => Promise<void>;
};

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const answers = new Map<string, Answer | ((n: number) => Answer)>();
  const counts = new Map<string, number>();
  const sockets = new Set<import("node:net").Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const secret = secrets.get(path);
      let verified = false;
      try {
        if (secret) {
          new Webhook(secret).verify(raw, headers);
          verified = true;
        }
      } catch {
        verified = false;
      }
      let body: Received["body"] = {};
      try {
        body = JSON.parse(raw);
      } catch {
        // recorded as an empty body
      }
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      received.push({ path, id: headers["webhook-id"] ?? "", timestamp: headers["webhook-timestamp"] ?? "", verified, body, raw, headers, at: Date.now() });
      const rule = answers.get(path);
      const answer = typeof rule === "function" ? rule(n) : (rule ?? { status: 200 });
      if (answer === "hang") return;
      res.writeHead(answer.status, { "content-type": "text/plain", ...(answer.retryAfter ? { "retry-after": answer.retryAfter } : {}) });
      res.end(answer.body ?? (verified ? "ok" : "signature not verified"));
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    url: (path) => `http://127.0.0.1:${actual}${path}`,
    received,
    secrets,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
