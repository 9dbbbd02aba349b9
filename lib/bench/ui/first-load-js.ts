/** Each page's first-load JavaScript (gzip) from the existing `.next/` build, read only. */
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { gzipSync } from "node:zlib";

/** The operator pages, named; any other page route the build has is listed after them. */
const PAGES: Record<string, string> = {
  "/": "overview",
  "/operations": "operations list",
  "/operations/[operationId]": "operation",
  "/trajectories": "trajectories",
  "/trajectories/[trajectoryId]": "trajectory",
  "/review": "review queue",
};

/**
 * Next 16 (Turbopack) writes `.next/diagnostics/route-bundle-stats.json`: per route, the chunks
 * its first load fetches. Cross-checked against the route's client-reference manifest (the
 * `entryJSFiles` of its layouts and page) plus `build-manifest.json` `rootMainFiles`; the
 * `polyfillFiles` are `nomodule` and not loaded by modern browsers, so they are left out.
 */
export function firstLoadJs(root: string) {
  const next = path.join(root, ".next");
  if (!existsSync(path.join(next, "BUILD_ID"))) {
    console.log("no .next/ build here: first-load JavaScript not measured (run `npm run build` first).");
    return;
  }
  const buildId = readFileSync(path.join(next, "BUILD_ID"), "utf8").trim();
  const builtAt = statSync(path.join(next, "BUILD_ID")).mtime.toISOString().slice(0, 16).replace("T", " ");
  const statsFile = path.join(next, "diagnostics/route-bundle-stats.json");
  const stats: { route: string; firstLoadUncompressedJsBytes: number; firstLoadChunkPaths: string[] }[] = existsSync(statsFile)
    ? JSON.parse(readFileSync(statsFile, "utf8"))
    : [];

  const buildManifest = JSON.parse(readFileSync(path.join(next, "build-manifest.json"), "utf8")) as { rootMainFiles: string[] };
  const appPaths = JSON.parse(readFileSync(path.join(next, "app-path-routes-manifest.json"), "utf8")) as Record<string, string>;
  const fromManifest = (route: string): string[] | null => {
    const entry = Object.entries(appPaths).find(([, r]) => r === route)?.[0];
    if (!entry) return null;
    const file = path.join(next, "server/app", `${entry}_client-reference-manifest.js`);
    if (!existsSync(file)) return null;
    const sandbox: { __RSC_MANIFEST?: Record<string, { entryJSFiles: Record<string, string[]> }> } = {};
    vm.runInNewContext(readFileSync(file, "utf8"), sandbox);
    const m = sandbox.__RSC_MANIFEST?.[entry];
    if (!m) return null;
    return [...new Set([...Object.values(m.entryJSFiles).flat(), ...buildManifest.rootMainFiles])].map((p) => `.next/${p}`);
  };

  const gz = new Map<string, { raw: number; gzip: number } | null>();
  const size = (rel: string) => {
    if (!gz.has(rel)) {
      const file = path.join(root, rel);
      if (!existsSync(file)) gz.set(rel, null);
      else {
        const buf = readFileSync(file);
        gz.set(rel, { raw: buf.length, gzip: gzipSync(buf).length });
      }
    }
    return gz.get(rel)!;
  };
  console.log(`First-load JavaScript per page (build ${buildId}, ${builtAt} UTC; gzip level 6 of each chunk, summed):`);
  const shared = buildManifest.rootMainFiles.map((p) => size(`.next/${p}`));
  const sharedGz = shared.reduce((a, s) => a + (s?.gzip ?? 0), 0);
  const pageRoutes = Object.entries(appPaths)
    .filter(([entry]) => entry.endsWith("/page") && !/\/_(not-found|global-error)\/page$/.test(entry))
    .map(([, route]) => route);
  const routes = [...Object.keys(PAGES), ...pageRoutes.filter((r) => !(r in PAGES)).sort()];
  for (const route of routes) {
    const label = PAGES[route] ?? "";
    const fromStats = stats.find((s) => s.route === route)?.firstLoadChunkPaths ?? null;
    const fromRsc = fromManifest(route);
    const chunks = fromStats ?? fromRsc;
    if (!chunks) {
      console.log(`  ${route.padEnd(30)} not in this build`);
      continue;
    }
    const sizes = chunks.map(size);
    const missing = sizes.filter((s) => s === null).length;
    const raw = sizes.reduce((a, s) => a + (s?.raw ?? 0), 0);
    const gzip = sizes.reduce((a, s) => a + (s?.gzip ?? 0), 0);
    const agree = fromStats && fromRsc ? (fromStats.length === fromRsc.length && fromStats.every((c) => fromRsc.includes(c)) ? "manifests agree" : "manifests DISAGREE") : fromStats ? "route-bundle-stats only" : "client-reference manifest only";
    console.log(
      `  ${route.padEnd(30)} ${label.padEnd(16)} ${(gzip / 1024).toFixed(1).padStart(6)} kB gzip  (${(raw / 1024).toFixed(1)} kB raw, ${chunks.length} chunks, ` +
        `${((gzip - sharedGz) / 1024).toFixed(1)} kB beyond the shared runtime; ${agree}${missing ? `; ${missing} chunk(s) missing on disk` : ""})`,
    );
  }
  console.log(`  shared by every page (rootMainFiles): ${(sharedGz / 1024).toFixed(1)} kB gzip`);
}
