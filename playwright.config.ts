import { defineConfig } from "@playwright/test";

/** Two servers, each on its own fresh database: one with the demo data, one empty (first run). */
export const DEMO_PORT = Number(process.env.E2E_PORT || 3210);
export const EMPTY_PORT = DEMO_PORT + 1;

const server = (port: number, mode: string) => ({
  command: `node node_modules/tsx/dist/cli.mjs --conditions=react-server lib/testing/e2e-server.ts ${port} ${mode}`,
  url: `http://127.0.0.1:${port}/api/health`,
  timeout: 120_000,
  reuseExistingServer: false,
  stdout: "pipe" as const,
  stderr: "pipe" as const,
  // The webhooks spec's receiver listens on 127.0.0.1 over plain HTTP; the verifiers spec saves
  // the editor's example, which sends {env.X_READ_TOKEN} (listed, and not set: its dry run says so).
  env: { ...(process.env as Record<string, string>), RECONCILE_WEBHOOK_ALLOW_HTTP: "1", RECONCILE_WEBHOOK_ALLOW_PRIVATE: "1", RECONCILE_VERIFIER_ENV: "X_READ_TOKEN" },
});

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: true,
  timeout: 30_000,
  reporter: [["list"], ["json"]],
  outputDir: "test-results/e2e",
  use: {
    baseURL: `http://127.0.0.1:${DEMO_PORT}`,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
  webServer: [server(DEMO_PORT, "demo"), server(EMPTY_PORT, "empty")],
});
