/**
 * A Vercel AI SDK tool whose `execute` is guarded: every call the model makes is one operation
 * in Reconcile, its intent recorded before the post goes out.
 *
 *   const rc = new Reconcile({ url: process.env.RECONCILE_URL!, token: process.env.RECONCILE_TOKEN! });
 *   await generateText({ model, tools: { publish: publishTool(rc, api) }, prompt });
 *   await rc.close();
 */
import { tool } from "ai";
import { z } from "zod";
import { RetryBlockedError, type GuardCall, type Reconcile } from "@reconcile/client";
import { publishIntent, readBack, type SocialApi } from "./social-api";

export function publishTool(rc: Reconcile, api: SocialApi) {
  // The guarded function's second argument is the AI SDK's execute options; it needs their toolCallId.
  const send = (input: { text: string }, call: GuardCall<{ toolCallId: string }>) => api.publish(input.text, call.idempotencyKey);
  const publish = rc.guard("social.publish", send, {
    intent: publishIntent,
    receipt: (post) => ({ receipt_id: post.id }),
    verify: (_input, post) => readBack(api, post),
    // The model's tool call id names the operation; the API enforces it as its idempotency key.
    operationId: (_input, options) => options?.toolCallId,
    idempotency: { enforced: true },
  });

  return tool({
    description: "Publish one post on the social account.",
    inputSchema: z.object({ text: z.string().min(1).max(280) }),
    execute: async (input, options) => {
      try {
        const post = await publish(input, options);
        return { published: true, url: post.url };
      } catch (error) {
        // Tell the model why, rather than let it try the same call again.
        if (error instanceof RetryBlockedError) return { published: false, blocked: error.gate.reason };
        throw error;
      }
    },
  });
}
