/**
 * The global-fetch scope the Langfuse client runs in (./scoped-fetch.ts): inside it the guarded
 * client answers (real HTTP to a local server, its rules applied); everywhere else the fetch the
 * process had (here a recorder standing in for Next.js's patched fetch, with its markers) gets
 * exactly the same call and its promise back; the wrapper goes in once, even from a second copy
 * of the module, and survives a fetch installed over it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { guardedFetch } from "./guarded-fetch";
import { OutboundRefused, outboundPolicy } from "./guarded-request";

let server: Server;
let base: string;
const native = globalThis.fetch;
const calls: { input: unknown; init: unknown; self: unknown }[] = [];
const returned: Promise<Response>[] = [];
const before = Object.assign(
  function fetch(this: unknown, input: RequestInfo | URL, init?: RequestInit) {
    calls.push({ input, init, self: this });
    const p = native(input, init);
    returned.push(p);
    return p;
  },
  { __nextPatched: true, _nextOriginalFetch: native },
) as unknown as typeof fetch;

beforeAll(async () => {
  server = createServer((req, res) => res.end(`${req.method} ${req.url}`));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  globalThis.fetch = before;
});
afterAll(async () => {
  globalThis.fetch = native;
  delete (globalThis as { __reconcileScopedFetch?: unknown }).__reconcileScopedFetch;
  await new Promise((r) => server.close(r));
});

const guarded = (allowPrivate: boolean) => guardedFetch({ ...outboundPolicy("verdict", ["127.0.0.1"], { timeoutMs: 2000 }), allowHttp: true, allowPrivate });

describe("withFetch: the guarded client for one call's own work, the process's fetch everywhere else", () => {
  it("routes the scope's fetches through the given client, and only those", async () => {
    const { withFetch } = await import("./scoped-fetch");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inside = withFetch(guarded(true), async () => {
      await gate;
      return (await fetch(`${base}/in`, { method: "POST", body: "x" })).text();
    });
    // Started while the scope is open, but not from it: the process's fetch.
    const init = { method: "PUT", body: "y" };
    const outside = globalThis.fetch(`${base}/out`, init);
    expect(outside).toBe(returned[0]);
    expect(calls).toEqual([{ input: `${base}/out`, init, self: globalThis }]);
    release();
    expect(await inside).toBe("POST /in");
    expect(await (await outside).text()).toBe("PUT /out");
    expect(calls).toHaveLength(1);
    // The guarded client's rules hold inside: a private address refused, with its rule.
    await expect(withFetch(guarded(false), () => fetch(`${base}/in`))).rejects.toBeInstanceOf(OutboundRefused);
    expect(calls).toHaveLength(1);
  });

  it("two scopes at once keep their own clients", async () => {
    const { withFetch } = await import("./scoped-fetch");
    const tagged = (tag: string) => (async () => new Response(tag)) as unknown as typeof fetch;
    const run = (tag: string, ms: number) => withFetch(tagged(tag), async () => {
      await new Promise((r) => setTimeout(r, ms));
      return (await fetch(`${base}/x`)).text();
    });
    expect(await Promise.all([run("a", 30), run("b", 5), run("c", 15)])).toEqual(["a", "b", "c"]);
  });

  it("is installed once: the same wrapper after more calls and from a second copy of the module, with the markers of the fetch it wraps", async () => {
    const { withFetch } = await import("./scoped-fetch");
    await withFetch(guarded(true), async () => null);
    const wrapper = globalThis.fetch;
    expect(wrapper).not.toBe(before);
    expect(wrapper.name).toBe("fetch");
    expect((wrapper as unknown as { __nextPatched: boolean }).__nextPatched).toBe(true);
    expect((wrapper as unknown as { _nextOriginalFetch: unknown })._nextOriginalFetch).toBe(native);
    vi.resetModules();
    const second = await import("./scoped-fetch");
    expect(await second.withFetch(guarded(true), async () => (await fetch(`${base}/again`)).text())).toBe("GET /again");
    expect(globalThis.fetch).toBe(wrapper);
  });

  it("a fetch installed over it later (as Next.js patches lazily) still reaches the scope; outside, the process's fetch", async () => {
    const { withFetch } = await import("./scoped-fetch");
    const wrapper = globalThis.fetch;
    const seen: string[] = [];
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(String(input));
      return wrapper(input, init);
    }) as typeof fetch;
    try {
      expect(await withFetch(guarded(true), async () => (await fetch(`${base}/late`)).text())).toBe("GET /late");
      const n = calls.length;
      expect(await (await fetch(`${base}/plain`)).text()).toBe("GET /plain");
      expect(calls.length).toBe(n + 1);
      expect(seen).toEqual([`${base}/late`, `${base}/plain`]);
    } finally {
      globalThis.fetch = wrapper;
    }
  });
});
