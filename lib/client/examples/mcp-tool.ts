/**
 * An MCP server (the official @modelcontextprotocol/sdk) whose tool handler is guarded the same
 * way. The caller names the operation with `request_id`: when an MCP client sends the same call
 * again (a timeout on its side, a reconnect), the guard asks Reconcile before publishing twice.
 *
 *   const server = publishServer(new Reconcile({ url, token }), api);
 *   await server.connect(new StdioServerTransport());
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RetryBlockedError, ToolRefusal, type Reconcile } from "@reconcile/client";
import { publishIntent, readBack, type SocialApi } from "./social-api";

export function publishServer(rc: Reconcile, api: SocialApi): McpServer {
  const publish = rc.guard("social.publish", (input: { text: string; request_id?: string }, call) => api.publish(input.text, call.idempotencyKey), {
    intent: publishIntent,
    receipt: (post) => ({ receipt_id: post.id }),
    verify: (_input, post) => readBack(api, post),
    operationId: (input) => input.request_id,
    idempotency: { enforced: true },
  });

  const server = new McpServer({ name: "social", version: "1.0.0" });
  server.registerTool(
    "social_publish",
    {
      description: "Publish one post on the social account. Send the same request_id when you repeat a call.",
      inputSchema: { text: z.string().min(1).max(280), request_id: z.string().min(1).max(200).optional() },
    },
    async (input) => {
      try {
        const post = await publish(input);
        return { content: [{ type: "text", text: `published: ${post.url}` }] };
      } catch (error) {
        if (error instanceof RetryBlockedError) return { isError: true, content: [{ type: "text", text: `not published again: ${error.gate.reason}` }] };
        if (error instanceof ToolRefusal) return { isError: true, content: [{ type: "text", text: error.message }] };
        throw error; // fate unknown: the SDK reports it as a tool error
      }
    },
  );
  return server;
}
