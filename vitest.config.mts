import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  resolve: {
    alias: {
      "@": path.resolve(import.meta.dirname),
      // The client package's examples import it by its name, as its users do.
      "@reconcile/client": path.resolve(import.meta.dirname, "lib/client/src/index.ts"),
      // server-only throws outside React Server Components; tests run in plain Node.
      "server-only": path.resolve(import.meta.dirname, "lib/testing/server-only-stub.ts"),
    },
  },
  test: {
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["lib/**/*.test.ts", "components/**/*.test.ts"], environment: "node" },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["lib/**/*.itest.ts"],
          environment: "node",
          globalSetup: ["lib/testing/cli-bundle-setup.ts", "lib/testing/integration-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // Harnesses that start (and kill) their own servers: crash safety, load.
        extends: true,
        test: { name: "reliability", include: ["lib/**/*.rtest.ts"], environment: "node", globalSetup: ["lib/testing/cli-bundle-setup.ts"], testTimeout: 900_000, fileParallelism: false },
      },
      {
        // The same, on the PostgreSQL named by RELIABILITY_DATABASE_URL: several app instances on one database.
        extends: true,
        test: { name: "reliability-pg", include: ["lib/**/*.pgtest.ts"], environment: "node", globalSetup: ["lib/testing/cli-bundle-setup.ts"], testTimeout: 300_000, fileParallelism: false },
      },
    ],
  },
});
