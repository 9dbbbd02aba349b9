/**
 * A stand-in for a Langfuse server (which needs ClickHouse, so cannot run here) for
 * lib/verdicts/langfuse.itest.ts: it records each request the official client makes (method,
 * path, query, headers, JSON body) and answers as Langfuse's API does for POST /api/public/scores
 * (200 with `{id}`, the score kept by its id: a second score with the same id replaces the first),
 * 401 when the Basic auth is not the project's keys, the status the test sets, or a redirect. The requests are
 * checked against Langfuse's own description afterwards (./vendor-contract.ts).
 */
import http from "node:http";
import type { LangfuseSeen } from "./vendor-contract";

export type LangfuseRequest = LangfuseSeen & { status: number };

export type LangfuseReceiver = {
  url: string;
  requests: LangfuseRequest[];
  /** Every score accepted, in order (a later one with the same id follows the earlier). */
  scores: Record<string, any>[];
  /** The scores as Langfuse keeps them: by id, the latest. */
  byId: Map<string, Record<string, any>>;
  answer: (status: number | null) => void;
  /** Answers 307 to this URL instead (null: answers again). */
  redirect: (to: string | null) => void;
  close: () => Promise<void>;
};

export async function startLangfuseReceiver(keys: { publicKey: string; secretKey: string }): Promise<LangfuseReceiver> {
  let forced: number | null = null;
  let redirectTo: string | null = null;
  const requests: LangfuseRequest[] = [];
  const scores: Record<string, any>[] = [];
  const byId = new Map<string, Record<string, any>>();
  const basic = `Basic ${Buffer.from(`${keys.publicKey}:${keys.secretKey}`).toString("base64")}`;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const u = new URL(req.url ?? "/", "http://langfuse");
      const text = Buffer.concat(chunks).toString("utf8");
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // kept as text: the contract check names it
      }
      if (redirectTo) {
        requests.push({ method: req.method ?? "", path: u.pathname, query: Object.fromEntries(u.searchParams), body, headers: req.headers, status: 307 });
        return res.writeHead(307, { location: redirectTo }).end();
      }
      const status = forced ?? (req.headers.authorization !== basic ? 401 : u.pathname === "/api/public/scores" && req.method === "POST" ? 200 : 404);
      requests.push({ method: req.method ?? "", path: u.pathname, query: Object.fromEntries(u.searchParams), body, headers: req.headers, status });
      if (status !== 200) {
        return res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ message: status === 401 ? "Invalid credentials" : "no" }));
      }
      scores.push(body);
      byId.set(body.id, body);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: body.id }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    scores,
    byId,
    answer: (s) => (forced = s),
    redirect: (to) => (redirectTo = to),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
