/**
 * The agent of the crash test (lib/client/crash.itest.ts), run as its own process: it guards a
 * tool call, says CALLING when the tool function starts, and then waits to be killed: the post
 * never goes out and no receipt can come back.
 */
import { Reconcile } from "../src/index";

const rc = new Reconcile({ url: process.env.RECONCILE_URL!, token: process.env.RECONCILE_TOKEN! });
const publish = rc.guard(
  "social.publish",
  async (_input: { text: string }) => {
    process.stdout.write("CALLING\n");
    setInterval(() => {}, 1_000); // keeps the process alive until it is killed
    await new Promise(() => {});
  },
  {
    intent: (input) => ({ target: "social account", effect: "publish exactly one post", params: input }),
    operationId: () => process.env.OPERATION_ID,
    idempotency: { enforced: true },
  },
);
void publish({ text: "a post that never goes out" });
