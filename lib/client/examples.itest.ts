/**
 * The package's examples, run against the real server: the Vercel AI SDK tool and the MCP tool
 * handler, each guarded, with an in-memory social network that can lose a post it accepted.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { Reconcile } from "@reconcile/client";
import { publishTool } from "./examples/ai-sdk-tool";
import { publishServer } from "./examples/mcp-tool";
import type { Post, SocialApi } from "./examples/social-api";

/** Accepts every post; `lose` makes it drop the next one from the profile (the essay's case). */
function network() {
  const profile = new Map<string, Post>();
  const published: string[] = [];
  let lose = false;
  const api: SocialApi = {
    async publish(text, key) {
      const post = { id: `post-${key}`, url: `https://social.example/p/${key}`, text };
      published.push(key);
      if (lose) lose = false;
      else profile.set(post.id, post);
      return post;
    },
    async find(id) {
      return profile.get(id) ?? null;
    },
  };
  return { api, published, loseNext: () => (lose = true) };
}

let token: string;
let rc: Reconcile;
beforeAll(async () => {
  token = (await principal("reviewer", ["ingest", "verify", "read"])).token;
});
afterEach(async () => {
  await rc?.close();
});

const operation = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token })).body;
/** What generateText passes to a tool's execute: the call's id, the messages so far, the tool's context (none). */
const options = (toolCallId: string) => ({ toolCallId, messages: [], context: {} });

describe("the AI SDK tool", () => {
  it("records each call under its tool call id: verified when the post is there, divergent when it is not, and a repeat is blocked", async () => {
    rc = new Reconcile({ url: baseUrl, token });
    const net = network();
    const tool = publishTool(rc, net.api);
    const [ok, lost] = [unique("call"), unique("call")];

    expect(await tool.execute!({ text: "first" }, options(ok))).toEqual({ published: true, url: `https://social.example/p/${ok}` });
    net.loseNext();
    expect(await tool.execute!({ text: "second" }, options(lost))).toEqual({ published: true, url: `https://social.example/p/${lost}` });
    await rc.flush();
    expect(await operation(ok)).toMatchObject({ outcome: "verified", tool: { name: "social.publish" }, idempotency: { enforced: true, key: ok } });
    expect(await operation(lost)).toMatchObject({ outcome: "divergent", reason: "the write was accepted but the canonical effect is absent" });

    // The model repeats the lost call: the tool says why it will not publish again.
    expect(await tool.execute!({ text: "second" }, options(lost))).toEqual({ published: false, blocked: "blocked until canonical state is reconciled" });
    expect(net.published).toEqual([ok, lost]);
  });
});

describe("the MCP tool handler", () => {
  it("publishes through a real MCP client and session, and refuses a repeated request_id", async () => {
    rc = new Reconcile({ url: baseUrl, token });
    const net = network();
    const server = publishServer(rc, net.api);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "itest", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const requestId = unique("mcp");
      const first = await client.callTool({ name: "social_publish", arguments: { text: "hello", request_id: requestId } });
      expect(first).toMatchObject({ content: [{ type: "text", text: `published: https://social.example/p/${requestId}` }] });
      expect(first.isError).toBeFalsy();
      const again = await client.callTool({ name: "social_publish", arguments: { text: "hello", request_id: requestId } });
      expect(again).toMatchObject({ isError: true, content: [{ type: "text", text: "not published again: do not retry: the effect is verified" }] });
      expect(net.published).toEqual([requestId]);
      await rc.flush();
      expect(await operation(requestId)).toMatchObject({ outcome: "verified", stages: [{ stage: "intent" }, { stage: "receipt" }, { stage: "canonical_read" }] });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
