/**
 * `npm run demo`: build, migrate the embedded database, load the demo data, create the demo
 * users and an API token, start the server, its verifier and MCP gateway, then print where to
 * sign in and what to try (./demo-banner.ts), in one block after the server's own lines.
 */
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { DEMO_USERS } from "../domain/demo-data";
import { holdOneCall, startDemoGateway } from "./demo-gateway";
import { demoVerifierEnv, seedDemoVerifier, startDemoSocial } from "./demo-verifier";
import { prepare, startServer } from "./start";
import { demoBanner, demoGatewayPort, type DemoBannerFacts } from "./demo-banner";


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
  // The address first; the server's own start-up lines follow; the whole block below once all is set up.
  console.log(`\nReconcile demo: starting at ${url} (sign-in, token and gateway below once it is up)…\n`);
  startServer(env, port);
  const facts: DemoBannerFacts = { url, users: DEMO_USERS, token: token ?? "", social: social.base, watch: null, gateway: null };
  try {
    const id = await seedDemoVerifier(`http://127.0.0.1:${port}`, setupToken, social);
    facts.watch = `${url}/p/default/operations/${encodeURIComponent(id)}`;
    const { port: gatewayPort, fromEnv } = demoGatewayPort(Number(port), process.env.RECONCILE_GATEWAY_PORT);
    const { file, running } = await startDemoGateway({ appUrl: `http://127.0.0.1:${port}`, port: gatewayPort, token: gatewayToken, socialBase: social.base });
    const held = await holdOneCall(running.url!).then(
      () => true,
      (e) => {
        facts.problem = `the demo's held call could not be made: ${e instanceof Error ? e.message : e}`;
        return false;
      },
    );
    facts.gateway = { url: running.url!, port: gatewayPort, portFromEnv: fromEnv, configFile: path.relative(process.cwd(), file), held };
  } catch (e) {
    facts.problem = `the demo verifier or gateway could not be set up: ${e instanceof Error ? e.message : e}`;
  }
  console.log(demoBanner(facts));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
