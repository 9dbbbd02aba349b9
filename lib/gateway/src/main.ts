#!/usr/bin/env node
/**
 * `reconcile-gateway --config FILE` (or RECONCILE_GATEWAY_CONFIG=FILE): the MCP gateway in front
 * of the configured upstream servers. With `listen.stdio`, an MCP client starts it as its server
 * command (so nothing but MCP goes to stdout: messages go to stderr).
 */
import { ConfigError, loadConfig } from "./config.js";
import { startGateway } from "./server.js";

function configPath(argv: string[]): string | null {
  const i = argv.indexOf("--config");
  if (i >= 0) return argv[i + 1] ?? null;
  const eq = argv.find((a) => a.startsWith("--config="));
  return eq ? eq.slice("--config=".length) : (process.env.RECONCILE_GATEWAY_CONFIG ?? null);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stderr.write("usage: reconcile-gateway --config reconcile-gateway.json   (or RECONCILE_GATEWAY_CONFIG=FILE)\n");
    return;
  }
  const file = configPath(argv);
  if (!file) throw new ConfigError("name the configuration: --config reconcile-gateway.json (or RECONCILE_GATEWAY_CONFIG)");
  const config = loadConfig(file);
  const running = await startGateway(config);
  process.stderr.write(`reconcile-gateway: ready${running.url ? ` on ${running.url}` : ""}${config.listen.stdio ? " (stdio)" : ""}; recording to ${config.reconcile.url}${running.project ?? ""}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // A stdio client that goes away closes our stdin: stop with it.
  if (config.listen.stdio) process.stdin.on("end", stop);
}

main().catch((e) => {
  process.stderr.write(`reconcile-gateway: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
