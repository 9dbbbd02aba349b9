/**
 * The command line (lib/cli/index.ts) bundled once per test run, for the tests' many command-line
 * runs (lib/testing/cli.ts): the same source, the same react-server condition, every package left
 * to Node as tsx leaves it, only the loading of Reconcile's own TypeScript done once instead of
 * at each run (~1.7 s of CPU a run under tsx; docs/BENCHMARKS.md, "The test loop").
 *
 * Faithful where a bundle would not be by itself: each module's `import.meta.url`, `.filename`
 * and `.dirname` are its source file's, as under tsx (the schema engine finds the migrations
 * from its own folder; `isMain` checks such as lib/cli/start.ts's compare the running script
 * with their own file, and must not fire inside the bundle); class and function names are kept
 * (messages that print them); each command's `await import` stays a chunk loaded when it runs.
 * `npm run cli` itself (tsx) stays tested: lib/cli/cli-path.itest.ts and the integration suite's
 * deploy (lib/testing/integration-setup.ts) run it.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";
import { build, type Plugin } from "esbuild";

/** The environment variable naming the built bundle's entry file (set by the test projects' global setup). */
export const CLI_BUNDLE_ENV = "RECONCILE_TEST_CLI_BUNDLE";

/** Where the bundles are built: inside the checkout, so that Node finds the packages left out of them in ./node_modules. */
export const CLI_BUNDLE_ROOT = ".test-cli";

/** Each module's own `import.meta.url`, `.filename` and `.dirname`, as literals. */
const sourceImportMeta: Plugin = {
  name: "source-import-meta",
  setup(b) {
    b.onLoad({ filter: /\.(c|m)?tsx?$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = readFileSync(args.path, "utf8");
      const contents = text
        .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href))
        .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(args.path))
        .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(path.dirname(args.path)));
      return { contents, loader: args.path.endsWith("x") ? "tsx" : "ts" };
    });
  },
};

/** Builds the bundle into a new folder under CLI_BUNDLE_ROOT; returns its entry file and how to remove it. */
export async function buildCliBundle(root = process.cwd()): Promise<{ entry: string; remove: () => void }> {
  const outdir = path.join(root, CLI_BUNDLE_ROOT, `${process.pid}-${randomUUID().slice(0, 8)}`);
  mkdirSync(outdir, { recursive: true });
  await build({
    absWorkingDir: root,
    entryPoints: { cli: path.join(root, "lib/cli/index.ts") },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: `node${process.versions.node.split(".")[0]}`,
    conditions: ["react-server"],
    packages: "external",
    keepNames: true,
    tsconfig: path.join(root, "tsconfig.json"),
    plugins: [sourceImportMeta],
    logLevel: "error",
  });
  return { entry: path.join(outdir, "cli.mjs"), remove: () => rmSync(outdir, { recursive: true, force: true }) };
}

/**
 * The command that runs the command line: node on the bundle when this run built one, else
 * `npm run cli`'s own (tsx on lib/cli/index.ts), both with the react-server condition.
 */
export function cliCommand(env: NodeJS.ProcessEnv = process.env): string[] {
  const bundle = env[CLI_BUNDLE_ENV];
  if (bundle) return ["--conditions=react-server", bundle];
  return tsxCliCommand();
}

/** `npm run cli`'s command: tsx on lib/cli/index.ts with the react-server condition. */
export function tsxCliCommand(): string[] {
  return [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts"];
}
