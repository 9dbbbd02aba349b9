import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedRequest, OutboundRefused, outboundPolicy, type OutboundPolicy } from "./guarded-request";

/** Real HTTP against local servers this test starts: every rule, and every refusal's code. */
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    if (url.pathname === "/ok") {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }));
      });
      return;
    }
    if (url.pathname === "/same-host") return void res.writeHead(302, { location: "/ok" }).end();
    if (url.pathname === "/see-other") return void res.writeHead(303, { location: `http://127.0.0.1:${port}/ok` }).end();
    if (url.pathname === "/other-host") return void res.writeHead(301, { location: `http://localhost:${port}/ok` }).end();
    if (url.pathname === "/loop") return void res.writeHead(307, { location: "/loop" }).end();
    if (url.pathname === "/slow") return void setTimeout(() => res.end("late"), 2_000);
    if (url.pathname === "/big") return void res.end(Buffer.alloc(5_000, 97));
    res.writeHead(404).end("missing");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const local = (extra: Partial<OutboundPolicy> = {}): OutboundPolicy => ({
  allowHosts: ["127.0.0.1", "localhost"],
  allowHttp: true,
  allowPrivate: true,
  kind: "verifier",
  ...extra,
});

async function refusal(p: Promise<unknown>): Promise<OutboundRefused> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OutboundRefused) return e;
    throw e;
  }
  throw new Error("the request was not refused");
}

describe("guardedRequest", () => {
  it("makes the request: method, headers, body, status, response", async () => {
    const r = await guardedRequest({ method: "POST", url: `http://127.0.0.1:${port}/ok`, headers: { authorization: "Bearer s" }, body: "hi" }, local());
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toEqual({ method: "POST", body: "hi", auth: "Bearer s" });
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.redirects).toEqual([]);
  });

  it("answers a 404 as a response, not an error", async () => {
    const r = await guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/nothing` }, local());
    expect(r.status).toBe(404);
    expect(r.body.toString()).toBe("missing");
  });

  it("follows a redirect to the same host; a 303 becomes a GET without a body", async () => {
    const r = await guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/same-host` }, local());
    expect(r.status).toBe(200);
    expect(r.redirects).toEqual([`http://127.0.0.1:${port}/ok`]);
    const s = await guardedRequest({ method: "POST", url: `http://127.0.0.1:${port}/see-other`, body: "x" }, local());
    expect(JSON.parse(s.body.toString())).toMatchObject({ method: "GET", body: "" });
  });

  it("refuses a redirect to another host, even one that is allowed", async () => {
    const e = await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/other-host` }, local()));
    expect(e.code).toBe("cross_host_redirect");
    expect(e.message).toContain(`localhost:${port}`);
  });

  it("stops an endless redirect", async () => {
    expect((await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/loop` }, local()))).code).toBe("too_many_redirects");
  });

  it("refuses a host outside the allowlist without connecting", async () => {
    const e = await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/ok` }, local({ allowHosts: ["api.example.com"] })));
    expect(e.code).toBe("host_not_allowed");
    expect(e.message).toContain("api.example.com");
  });

  it("refuses http unless allowed, and other schemes always", async () => {
    const e = await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/ok` }, local({ allowHttp: false })));
    expect(e.code).toBe("scheme_not_allowed");
    expect(e.message).toContain("RECONCILE_VERIFIER_ALLOW_HTTP=1");
    expect((await refusal(guardedRequest({ method: "GET", url: "file:///etc/passwd" }, local()))).code).toBe("scheme_not_allowed");
    expect((await refusal(guardedRequest({ method: "GET", url: "not a url" }, local()))).code).toBe("bad_url");
    expect((await refusal(guardedRequest({ method: "GET", url: `http://u:p@127.0.0.1:${port}/ok` }, local()))).code).toBe("bad_url");
  });

  it("refuses a name resolving to 127.0.0.1 without the private allowance (checked at the socket's lookup)", async () => {
    const e = await refusal(guardedRequest({ method: "GET", url: `http://localhost:${port}/ok` }, local({ allowPrivate: false, kind: "webhook" })));
    expect(e.code).toBe("private_address");
    expect(e.message).toMatch(/localhost resolved to (127\.0\.0\.1|::1)/);
    expect(e.message).toContain("RECONCILE_WEBHOOK_ALLOW_PRIVATE=1");
  });

  it("refuses private and metadata IP literals before connecting", async () => {
    for (const host of ["127.0.0.1", "10.0.0.1", "169.254.169.254", "[::ffff:127.0.0.1]"]) {
      const e = await refusal(guardedRequest({ method: "GET", url: `http://${host}:${port}/ok` }, local({ allowPrivate: false, allowHosts: [host] })));
      expect(e.code, host).toBe("private_address");
    }
  });

  it("gives up at the deadline", async () => {
    const started = Date.now();
    const e = await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/slow` }, local({ timeoutMs: 200 })));
    expect(e.code).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("cuts off a response over the size cap", async () => {
    const e = await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/big` }, local({ maxBytes: 1_000 })));
    expect(e.code).toBe("too_large");
    const r = await guardedRequest({ method: "GET", url: `http://127.0.0.1:${port}/big` }, local({ maxBytes: 5_000 }));
    expect(r.body.length).toBe(5_000);
  });

  it("names a connection failure", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = await refusal(guardedRequest({ method: "GET", url: `http://127.0.0.1:${closedPort}/` }, local()));
    expect(e.code).toBe("network");
    expect(e.message).toContain("ECONNREFUSED");
  });

  it("reads its allowances from the environment", () => {
    process.env.RECONCILE_WEBHOOK_ALLOW_PRIVATE = "1";
    try {
      expect(outboundPolicy("webhook", ["a.test"])).toMatchObject({ allowHosts: ["a.test"], allowPrivate: true, allowHttp: false });
      expect(outboundPolicy("verifier", ["a.test"])).toMatchObject({ allowPrivate: false });
    } finally {
      delete process.env.RECONCILE_WEBHOOK_ALLOW_PRIVATE;
    }
  });
});
