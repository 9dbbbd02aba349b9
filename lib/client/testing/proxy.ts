/**
 * A small HTTP proxy for the client's tests, in front of the real server: it forwards, or answers
 * for the server (a 429 storm), and it can stop listening and start again on the same port
 * (Reconcile down, then back). It notes every request it sees.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Canned = { status: number; headers?: Record<string, string>; body?: string };
export type Seen = { at: number; method: string; path: string; answered: number };

export class TestProxy {
  readonly seen: Seen[] = [];
  /** What to do with a request: forward it (null) or answer it with this. */
  decide: (req: http.IncomingMessage) => Canned | null = () => null;
  private server: http.Server | null = null;

  private constructor(
    private readonly target: string,
    public port: number,
  ) {}

  static async start(target: string): Promise<TestProxy> {
    const proxy = new TestProxy(target, 0);
    await proxy.listen();
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (again) on its port: connections are refused while it does not. */
  async listen(): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every open connection. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const seen: Seen = { at: Date.now(), method: req.method ?? "GET", path: req.url ?? "/", answered: 0 };
    this.seen.push(seen);
    const canned = this.decide(req);
    if (canned) {
      seen.answered = canned.status;
      res.writeHead(canned.status, { "content-type": "application/json", ...canned.headers });
      res.end(canned.body ?? "");
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of ["authorization", "content-type"]) if (req.headers[name]) headers[name] = String(req.headers[name]);
    try {
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(this.target + seen.path, { method: seen.method, headers, body });
      const text = await upstream.text();
      seen.answered = upstream.status;
      const out: Record<string, string> = { "content-type": upstream.headers.get("content-type") ?? "application/json" };
      const retryAfter = upstream.headers.get("retry-after");
      if (retryAfter) out["retry-after"] = retryAfter;
      res.writeHead(upstream.status, out);
      res.end(text);
    } catch (e) {
      seen.answered = 502;
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(e));
    }
  }
}
