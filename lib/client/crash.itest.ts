/**
 * A crash between the intent and the call: an agent process records its intent through guard,
 * starts the tool function, and is killed (SIGKILL) before the call goes out. The operation
 * stays uncertain, with a blocked retry, for a reviewer to reconcile.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { Reconcile } from "./src/index";

let token: string;
beforeAll(async () => {
  token = (await principal("viewer", ["ingest", "read"])).token;
});

it("the intent survives the agent; without a receipt the operation is uncertain and no retry is allowed", async () => {
  const operationId = unique("crash");
  // The agent runs in this one process (tsx as a loader, not tsx's command, which would run it
  // in a child of its own that a SIGKILL of the parent leaves running: issue 35).
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve("lib/client/testing/crash-child.ts")], {
    env: { ...process.env, RECONCILE_URL: baseUrl, RECONCILE_TOKEN: token, OPERATION_ID: operationId },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const calling = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      output += d;
      if (output.includes("CALLING")) resolve();
    });
    child.stderr!.on("data", (d) => (output += d));
    child.on("exit", (code) => reject(new Error(`the agent exited (${code}) before calling:\n${output}`)));
  });
  await calling;
  const exited = new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");

  const op = await call(`/api/v1/operations/${encodeURIComponent(operationId)}`, { token });
  expect(op.status).toBe(200);
  expect(op.body.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent"]);
  expect(op.body).toMatchObject({ outcome: "uncertain", reason: "no receipt recorded", tool: { name: "social.publish" }, idempotency: { enforced: true, key: operationId } });

  // The restarted agent asks before trying again: a safe replay exists (the key was enforced), an automatic retry does not.
  const rc = new Reconcile({ url: baseUrl, token });
  expect(await rc.mayRetry(operationId)).toEqual({
    allowed: false,
    reason: "blocked until canonical state is reconciled",
    safe_replay_available: true,
    key: operationId,
    outcome: "uncertain",
  });
  await rc.close();
});
