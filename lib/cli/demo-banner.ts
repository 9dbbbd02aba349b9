/**
 * What `npm run demo` prints once everything runs (issue 50): the address first, then how to
 * sign in, the API token and a curl to try it, the post Reconcile reads back itself, and the MCP
 * gateway (its address, how its port is derived, the call it holds for approval). One block,
 * printed after the server is up and the demo's verifier and gateway are set up, so that the
 * server's own log lines never land inside it. Pure: lib/cli/demo-banner.test.ts.
 */
export type DemoBannerFacts = {
  url: string;
  users: readonly { role: string; email: string; password: string }[];
  token: string;
  social: string;
  /** The published post's page; null when the verifier could not be set up (`problem` says why). */
  watch: string | null;
  gateway: { url: string; port: number; portFromEnv: boolean; configFile: string; held: boolean } | null;
  problem?: string;
};

export function demoBanner(f: DemoBannerFacts): string {
  const lines = [
    `Reconcile demo is running at ${f.url}`,
    "",
    `  Sign in at ${f.url}/login`,
    ...f.users.map((u) => `    ${u.role.padEnd(9)} ${u.email} / ${u.password}`),
    "",
    "  An API token for the admin (ingest, verify, read, export, review), shown once:",
    `    ${f.token}`,
    `  Try:  curl -H "Authorization: Bearer ${f.token}" "${f.url}/api/v1/operations?outcome=divergent"`,
    "",
    `  A local "social" service runs at ${f.social}, with a verifier for its tool social.post`,
    "  (Settings → Verifiers). One post was just published through it: Reconcile reads it back itself,",
    '  404 for a few seconds (uncertain, "observation window open"), then 200 (verified).',
    ...(f.watch ? [`  Watch it: ${f.watch}`] : []),
  ];
  if (f.gateway) {
    const g = f.gateway;
    lines.push(
      "",
      `  The MCP gateway runs at ${g.url} and records every tool call it passes on (config: ${g.configFile}).`,
      g.portFromEnv ? `  Its port, ${g.port}, is RECONCILE_GATEWAY_PORT's.` : `  Its port, ${g.port}, is the app's + 200 (RECONCILE_GATEWAY_PORT sets another).`,
      "  Add it to an MCP client's configuration (e.g. .cursor/mcp.json or claude_desktop_config.json):",
      `    { "mcpServers": { "reconcile": { "url": "${g.url}" } } }`,
      "  social.publish is answered with Reconcile's verdict (await_verdict), not the tool's receipt.",
      g.held
        ? `  A billing.charge over 100 waits for a reviewer: the demo's example agent sent one just now. See ${f.url}/review/approvals`
        : "  A billing.charge over 100 waits in Review → Approvals until a reviewer approves it.",
    );
  }
  if (f.problem) lines.push("", `  Not everything could be set up: ${f.problem}`);
  return `\n${lines.join("\n")}\n`;
}

/** The gateway's port: RECONCILE_GATEWAY_PORT when set, else the app's + 200. */
export function demoGatewayPort(appPort: number, env: string | undefined): { port: number; fromEnv: boolean } {
  const n = Number(env);
  return env && Number.isInteger(n) && n > 0 && n < 65536 ? { port: n, fromEnv: true } : { port: appPort + 200, fromEnv: false };
}
