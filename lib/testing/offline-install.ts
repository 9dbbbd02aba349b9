/**
 * Installs packed tarballs into an empty folder with npm and no network, as a user's
 * `npm install reconcile-client-….tgz reconcile-gateway-….tgz` would, for the installed-gateway test.
 *
 * `npm install --offline <tarballs>` cannot do it here: to choose versions npm asks the registry
 * for each dependency's full document, and the machine's npm cache holds only tarballs (a
 * checkout's `npm ci` installs from its lock file, by integrity). So this writes the folder's
 * package.json and a package-lock.json that pins the tarballs' dependencies to the versions the
 * checkout's lock file installed (the same packages the rest of the suite runs on), and runs
 * `npm ci --offline`: every package comes out of the cache by its integrity, and a dependency
 * the cache lacks fails the install rather than reaching the network.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const root = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

type LockEntry = {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [k: string]: unknown;
};
export type Tarball = { name: string; version: string; file: string; integrity: string };

/** Where Node finds `name` from the package at `from` (a lock file key): its own node_modules, then each parent's. */
function locate(packages: Record<string, LockEntry>, from: string, name: string): string | null {
  for (let at = from; ; ) {
    const key = at ? `${at}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[key]) return key;
    if (!at) return null;
    const i = at.lastIndexOf("/node_modules/");
    at = i >= 0 ? at.slice(0, i) : "";
  }
}

/**
 * The checkout's lock entries every dependency of these packages needs, at the same places in the
 * tree (a nested copy stays nested). A dependency the checkout has at another version than the
 * package names is an error: the tarball would be tested against packages it does not ask for.
 */
export function dependencyClosure(dependencies: Record<string, string>): Record<string, LockEntry> {
  const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const packages = lock.packages;
  const out: Record<string, LockEntry> = {};
  for (const [name, wanted] of Object.entries(dependencies)) {
    const found = packages[`node_modules/${name}`]?.version;
    if (found !== wanted) throw new Error(`the package asks for ${name}@${wanted}, the checkout's package-lock.json has ${found ?? "none"}`);
  }
  const todo: [string, string, boolean][] = Object.keys(dependencies).map((name) => ["", name, false]);
  while (todo.length) {
    const [from, name, optional] = todo.pop()!;
    const key = locate(packages, from, name);
    if (!key) {
      if (optional) continue;
      throw new Error(`${name} (needed by ${from || "the package"}) is not in the checkout's package-lock.json`);
    }
    if (out[key]) continue;
    // Whether the checkout needed it only for development says nothing about this folder.
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = packages[key];
    out[key] = entry;
    const metaOf = (entry.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    for (const d of Object.keys(entry.dependencies ?? {})) todo.push([key, d, false]);
    for (const d of Object.keys(entry.optionalDependencies ?? {})) todo.push([key, d, true]);
    for (const d of Object.keys(entry.peerDependencies ?? {})) todo.push([key, d, metaOf[d]?.optional === true]);
  }
  return out;
}

/** Installs the tarballs into `dir` (an empty folder): package.json, package-lock.json, `npm ci --offline`. */
export async function installOffline(dir: string, tarballs: Tarball[]): Promise<{ stdout: string; stderr: string }> {
  const direct: Record<string, string> = {};
  const own: Record<string, LockEntry> = {};
  const needs: Record<string, string> = {};
  for (const t of tarballs) {
    const pkg = JSON.parse(await tarballPackageJson(t.file)) as LockEntry & { bin?: unknown; engines?: unknown };
    direct[t.name] = `file:${t.file}`;
    own[`node_modules/${t.name}`] = {
      version: t.version,
      resolved: `file:${t.file}`,
      integrity: t.integrity,
      ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
      ...(pkg.bin ? { bin: pkg.bin } : {}),
      ...(pkg.engines ? { engines: pkg.engines } : {}),
    };
    Object.assign(needs, pkg.dependencies ?? {});
  }
  for (const t of tarballs) delete needs[t.name];
  const name = "reconcile-installed-test";
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, private: true, dependencies: direct }, null, 2));
  const lock = { name, lockfileVersion: 3, requires: true, packages: { "": { name, dependencies: direct }, ...own, ...dependencyClosure(needs) } };
  writeFileSync(path.join(dir, "package-lock.json"), JSON.stringify(lock, null, 2));
  return run("npm", ["ci", "--offline", "--no-audit", "--no-fund"], { cwd: dir, maxBuffer: 16 << 20 });
}

/** A tarball's own package.json, read with tar (the packed manifest, not the checkout's). */
async function tarballPackageJson(file: string): Promise<string> {
  return (await run("tar", ["-xOzf", file, "package/package.json"])).stdout;
}
