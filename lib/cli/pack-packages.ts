/**
 * `npm run pack:gateway [-- --out DIR]`: builds `@reconcile/client` and `@reconcile/gateway` (tsc:
 * ESM and type declarations) and packs each into a tarball in DIR (default `dist/`), the files a
 * user installs with `npm install -g reconcile-client-….tgz reconcile-gateway-….tgz`.
 *
 * Each package folder is copied to a fresh temporary folder and built and packed there (its own
 * `prepack` script runs `tsc`), so nothing is written into the checkout and two runs at once (the
 * test suite on SQLite and on PostgreSQL side by side) never share a `dist/`. The copy keeps the
 * checkout's layout (`client/` beside `gateway/`, whose build reads `../client/dist` for types)
 * and borrows the checkout's node_modules for tsc and the packages' types.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const root = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

export type PackedFile = { path: string; size: number };
export type Packed = { name: string; version: string; file: string; integrity: string; files: PackedFile[] };

/** `npm pack --json` in one folder: the tarball written to `dest` and what it holds. */
async function npmPack(dir: string, dest: string): Promise<Packed> {
  // --offline: packing needs no registry, and npm would otherwise wait on it (several seconds).
  const { stdout } = await run("npm", ["pack", "--offline", "--json", "--pack-destination", dest], { cwd: dir, maxBuffer: 16 << 20 });
  // The prepack script's own output (tsc) comes first; the JSON report is the last thing printed.
  const report = JSON.parse(stdout.slice(stdout.lastIndexOf("\n[") + 1)) as { name: string; version: string; filename: string; integrity: string; files: PackedFile[] }[];
  const [p] = report;
  return { name: p.name, version: p.version, file: path.join(dest, p.filename), integrity: p.integrity, files: p.files };
}

/** Builds and packs both packages into `dest`; the client first, since the gateway's build reads its types. */
export async function packPackages(dest: string): Promise<{ client: Packed; gateway: Packed }> {
  mkdirSync(dest, { recursive: true });
  const stage = mkdtempSync(path.join(os.tmpdir(), "reconcile-pack-"));
  try {
    symlinkSync(path.join(root, "node_modules"), path.join(stage, "node_modules"), "dir");
    for (const name of ["client", "gateway"]) {
      cpSync(path.join(root, "lib", name), path.join(stage, name), {
        recursive: true,
        filter: (src) => !/[\\/](dist|node_modules|\.reconcile-gateway)$/.test(src),
      });
    }
    const client = await npmPack(path.join(stage, "client"), dest);
    const gateway = await npmPack(path.join(stage, "gateway"), dest);
    return { client, gateway };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename);
if (isMain) {
  const i = process.argv.indexOf("--out");
  const dest = path.resolve(i >= 0 ? (process.argv[i + 1] ?? "") : path.join(root, "dist"));
  const { client, gateway } = await packPackages(dest);
  for (const p of [client, gateway]) console.log(`${p.name}@${p.version}: ${p.file} (${p.files.length} files)`);
}
