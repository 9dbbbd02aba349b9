/**
 * `npm run bench:pages`: each page's first-load JavaScript, from the build (`.next`): the
 * shared root chunks plus the chunks its layouts and page load, gzip-compressed as served.
 * Next 16's Turbopack build no longer prints these sizes.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

const root = ".next";
if (!existsSync(path.join(root, "build-manifest.json"))) {
  console.error("no build found: run `npm run build` first");
  process.exit(1);
}
const build = JSON.parse(readFileSync(path.join(root, "build-manifest.json"), "utf8")) as { rootMainFiles: string[]; polyfillFiles: string[] };
const gz = new Map<string, number>();
const size = (file: string) => {
  if (!gz.has(file)) gz.set(file, gzipSync(readFileSync(path.join(root, file))).length);
  return gz.get(file)!;
};

function manifests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return manifests(full);
    return name === "page_client-reference-manifest.js" ? [full] : [];
  });
}

const rows: [string, number][] = [];
for (const file of manifests(path.join(root, "server", "app"))) {
  const text = readFileSync(file, "utf8");
  const m = /"entryJSFiles":(\{[^}]*\})/.exec(text);
  if (!m) continue;
  const entries = JSON.parse(m[1]) as Record<string, string[]>;
  const route = "/" + path.relative(path.join(root, "server", "app"), path.dirname(file)).replace(/\(dashboard\)\/?/, "");
  if (route.includes("_global-error") || route.includes("_not-found")) continue;
  const files = new Set([...build.rootMainFiles, ...Object.values(entries).flat()]);
  rows.push([route === "/" ? "/" : route.replace(/\/$/, ""), [...files].reduce((a, f) => a + size(f), 0)]);
}
rows.sort((a, b) => a[0].localeCompare(b[0]));
console.log("first-load JavaScript per page (gzip):");
for (const [route, bytes] of rows) console.log(`  ${route.padEnd(36)} ${(bytes / 1024).toFixed(1)} KiB`);
