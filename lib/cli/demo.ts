/**
 * `npm run demo`: build, migrate the embedded database, load the demo data, create the demo
 * users and an API token, print where to sign in, and start the server.
 */
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { DEMO_USERS } from "../domain/demo-data";
import { holdOneCall, startDemoGateway } from "./demo-gateway";
import { demoVerifierEnv, seedDemoVerifier, startDemoSocial } from "./demo-verifier";
import { prepare, startServer } from "./start";


function cli(args: string[], env: NodeJS.ProcessEnv, allowFail = false): string {
  const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", ...args], {
    env,
    encoding: "utf8",
  });
  if (r.status !== 0 && !allowFail) throw new Error(`${args[0]} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

async function main() {
  const port = process.env.PORT || "3000";
  if (!process.argv.includes("--no-build")) {
    console.log("building the app (next build)…");
    execFileSync(process.execPath, [path.resolve("node_modules/next/dist/bin/next"), "build"], { stdio: "inherit" });
  }
  // The demo's own lines (sign-in, token, what to watch) stay readable: the server's per-request
  // JSON log lines only at warn unless LOG_LEVEL says otherwise.
  const env = { LOG_LEVEL: "warn", ...(await prepare()), ...demoVerifierEnv() };
  console.log(cli(["demo:load"], env).trim());
  for (const u of DEMO_USERS) cli(["users:add", "--email", u.email, "--password", u.password, "--role", u.role], env, true);
  const token = cli(["tokens:add", "--email", DEMO_USERS[0].email, "--scopes", "ingest,verify,read,export,review", "--name", `demo ${new Date().toISOString()}`], env)
    .trim()
    .split("\n")
    .pop();
  // Manages the demo's verifier (admin scope); used by this script only, never printed.
  const setupToken = cli(["tokens:add", "--email", DEMO_USERS[0].email, "--scopes", "admin,ingest", "--name", `demo verifier setup ${new Date().toISOString()}`], env)
    .trim()
    .split("\n")
    .pop()!;
  // The gateway records as the viewer: the calls it holds are approved by someone else (reviewer, admin).
  const viewer = DEMO_USERS.find((u) => u.role === "viewer")!;
  const gatewayToken = cli(["tokens:add", "--email", viewer.email, "--scopes", "ingest,read", "--name", `demo gateway ${new Date().toISOString()}`], env)
    .trim()
    .split("\n")
    .pop()!;
  const social = await startDemoSocial(Number(port));
  const url = `http://localhost:${port}`;
  console.log(`
Reconcile demo is starting at ${url}

  Sign in at ${url}/login
${DEMO_USERS.map((u) => `    ${u.role.padEnd(9)} ${u.email} / ${u.password}`).join("\n")}

  An API token for the admin (ingest, verify, read, export, review), shown once:
    ${token}
  Try:  curl -H "Authorization: Bearer ${token}" "${url}/api/v1/operations?outcome=divergent"
  A local "social" service runs at ${social.base}, with a verifier for its tool social.post
  (Settings → Verifiers). One post was just published through it: Reconcile reads it back itself,
  404 for a few seconds (uncertain, "observation window open"), then 200 (verified). Watch:
`);
  startServer(env, port);
  seedDemoVerifier(`http://127.0.0.1:${port}`, setupToken, social)
    .then(async (id) => {
      console.log(`    ${url}/p/default/operations/${id}\n`);
      const gatewayPort = Number(process.env.RECONCILE_GATEWAY_PORT || Number(port) + 200);
      const { file, running } = await startDemoGateway({ appUrl: `http://127.0.0.1:${port}`, port: gatewayPort, token: gatewayToken, socialBase: social.base });
      await holdOneCall(running.url!).catch((e) => console.error(`the demo's held call could not be made: ${e instanceof Error ? e.message : e}`));
      console.log(`  The MCP gateway records every tool call it passes on (config: ${path.relative(process.cwd(), file)}).
  Add it to an MCP client's configuration (e.g. .cursor/mcp.json or claude_desktop_config.json):
    { "mcpServers": {
        "reconcile": { "url": "${running.url}" } } }
  Its port is the app's + 200 (RECONCILE_GATEWAY_PORT sets it). social.publish is answered with
  Reconcile's verdict (await_verdict), not the tool's receipt. A billing.charge over 100 waits in
  Review → Approvals until a reviewer approves it: the demo's example agent sent one just now.
`);
    })
    .catch((e) => console.error(`the demo verifier or gateway could not be set up: ${e instanceof Error ? e.message : e}`));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
