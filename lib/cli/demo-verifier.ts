/**
 * The demo's verifier (`npm run demo`): a local "social" service in the demo's own process (on
 * loopback; a new post answers 404 for a few seconds, then 200), a verifier for its tool made
 * through the API, and one operation published through it, so that a new user sees a read
 * performed by Reconcile itself within seconds. Only the demo sets the allowances this needs
 * (plain http and a loopback address): RECONCILE_VERIFIER_ALLOW_HTTP/_PRIVATE.
 */
import { randomBytes } from "node:crypto";
import { startSocialService, socialVerifier, type SocialService } from "../verifiers/social-service";

/** The server's environment for the demo's verifier: the allowances, the service's read token, and the variables verifiers may send. */
export function demoVerifierEnv(): Record<string, string> {
  return {
    RECONCILE_VERIFIER_ALLOW_HTTP: "1",
    RECONCILE_VERIFIER_ALLOW_PRIVATE: "1",
    SOCIAL_READ_TOKEN: `demo-${randomBytes(12).toString("hex")}`,
    // The variables verifiers may send: the demo service's token, and the one the editor's example names.
    RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN,X_READ_TOKEN",
  };
}

export async function startDemoSocial(appPort: number): Promise<SocialService> {
  try {
    return await startSocialService({ port: appPort + 100, visibleAfterMs: 4000 });
  } catch {
    return startSocialService({ visibleAfterMs: 4000 });
  }
}

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("the server did not become healthy");
}

/** Once the server answers: the verifier (saved again only when it changed) and one new post, checked by it. */
export async function seedDemoVerifier(url: string, token: string, social: SocialService): Promise<string> {
  await waitForHealth(url);
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const def = socialVerifier(social.base, { name: "social-post-exists", tool: "social.post", checksAt: ["1s", "3s", "6s", "15s"], pendingUntil: "30s" });
  // The same read for the MCP gateway's social.publish (its receipts carry the post's id as receipt_id).
  // Its first check right after the receipt, so the gateway's await_verdict has a read to wait for.
  const viaGateway = socialVerifier(social.base, { name: "social-publish-exists", tool: "social.publish", checksAt: ["0s", "2s", "4500ms", "8s", "15s"], pendingUntil: "30s" });
  for (const d of [def, viaGateway]) {
    const saved = await fetch(`${url}/api/v1/verifiers`, { method: "POST", headers, body: JSON.stringify(d) });
    if (!saved.ok) throw new Error(`the demo verifier was refused: ${await saved.text()}`);
  }
  const text = "Reconcile demo: this post shows up a few seconds after it was accepted";
  const post = social.publish(text);
  const id = `op-demo-social-${Date.now()}`;
  const record = {
    operation_id: id,
    agent: { name: "demo-agent", version: "1" },
    tool: { name: "social.post", version: "1" },
    claimed_outcome: "success",
    intent: { target: "demo social account", effect: "publish exactly one post", params: { text } },
    receipt: { status: "accepted", receipt_id: post.id, observed_at: new Date().toISOString(), params: { text } },
  };
  const res = await fetch(`${url}/api/v1/receipts`, { method: "POST", headers, body: JSON.stringify(record) });
  if (!res.ok) throw new Error(`the demo operation was refused: ${await res.text()}`);
  return id;
}
