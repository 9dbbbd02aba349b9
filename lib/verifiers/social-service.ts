import http from "node:http";
import { createHash, randomUUID } from "node:crypto";

/**
 * A small local "social" service, eventually consistent like the essay's: a post created with
 * POST /2/posts answers 404 at GET /2/posts/{id} until it becomes visible, then 200
 * `{"data": {"id", "text", "sha256"}}` (the text's fingerprint, which its verifier takes: issue 54). The demo starts it so that a new user sees Reconcile perform a
 * read itself; tests and bench:verifiers start it to read against. Loopback only.
 */
export type SocialService = {
  base: string;
  port: number;
  /** Creates a post directly (as the tool would): visible after `visibleAfterMs`. */
  publish: (text: string, opts?: { id?: string; visibleAfterMs?: number }) => { id: string };
  /** Requests seen, in order (method, path, Authorization header). */
  seen: { method: string; path: string; authorization: string | null; at: number }[];
  close: () => Promise<void>;
};

export async function startSocialService(opts: { port?: number; visibleAfterMs?: number; keepSeen?: boolean } = {}): Promise<SocialService> {
  const posts = new Map<string, { text: string; visibleAt: number }>();
  const seen: SocialService["seen"] = [];
  const lag = opts.visibleAfterMs ?? 1500;
  const publish = (text: string, o: { id?: string; visibleAfterMs?: number } = {}) => {
    const id = o.id ?? randomUUID().slice(0, 12);
    posts.set(id, { text, visibleAt: Date.now() + (o.visibleAfterMs ?? lag) });
    return { id };
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://local");
    if (opts.keepSeen !== false) seen.push({ method: req.method ?? "", path: url.pathname, authorization: req.headers.authorization ?? null, at: Date.now() });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const m = /^\/2\/posts\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && m) {
      const post = posts.get(decodeURIComponent(m[1]));
      if (!post || Date.now() < post.visibleAt) return send(404, { errors: [{ title: "Not Found" }] });
      return send(200, { data: { id: decodeURIComponent(m[1]), text: post.text, sha256: `sha256:${createHash("sha256").update(post.text).digest("hex")}` } });
    }
    if (req.method === "POST" && url.pathname === "/2/posts") {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        let text = "";
        try {
          text = String((JSON.parse(body) as { text?: unknown }).text ?? "");
        } catch {
          return send(400, { errors: [{ title: "Invalid JSON" }] });
        }
        send(201, { data: publish(text) });
      });
      return;
    }
    send(404, { errors: [{ title: "Not Found" }] });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    publish,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The demo's verifier for this service (`tool`: the demo agent's publish tool). */
export function socialVerifier(base: string, opts: { name?: string; tool?: string; checksAt?: string[]; pendingUntil?: string; tokenEnv?: string } = {}) {
  const host = new URL(base).hostname;
  return {
    name: opts.name ?? "social-post-exists",
    tool: opts.tool ?? "social.post",
    request: {
      method: "GET" as const,
      url: `${base}/2/posts/{receipt.receipt_id}`,
      headers: { Authorization: `Bearer {env.${opts.tokenEnv ?? "SOCIAL_READ_TOKEN"}}` },
    },
    expect: [
      { when: { status: 404 }, read: "absent" as const },
      { when: { status: 200, json: { "/data/text": "{intent.params.text}" } }, read: "match" as const, evidence: { object_id: "/data/id", fingerprint: "/data/sha256" } },
      { when: { status: 200 }, read: "mismatch" as const },
    ],
    window: { checks_at: opts.checksAt ?? ["1s", "3s", "10s", "30s"], pending_until: opts.pendingUntil ?? "1m" },
    allow_hosts: [host],
  };
}
