/**
 * `npm run bench:metrics`: what a Prometheus scrape of GET /metrics costs the server, in ms a
 * scrape, on one server and database at two sizes in the same run: --small operations, then
 * ten times as many. The gauges read from the database at scrape time (chain heads, the last
 * checkpoint, due jobs, its size: lib/store/queries/vitals.ts) are index reads, so the ratio of
 * the two should stay near 1. Beside each, GET /api/health/live (the same server, no database)
 * as the floor a request costs. Scrapes and live checks alternate, one at a time, as a scraper
 * sends them. A scrape reads every ready project's database (lib/observability/scrape.ts), so a
 * third measure adds --projects more projects (each with --small ÷ 10 operations) and times the
 * scrape again: its ratio to the one-project scrape is what each project adds. Prints figures and
 * ratios; asserts nothing (docs/BENCHMARKS.md).
 *
 * Needs a build (`npm run build`). Options: --small N (operations, default 2,000), --scrapes N
 * (per size, default 200), --projects N (default 9), --database-url postgresql://… (an empty database).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { addProjectBenchToken, startBenchServer, stopBenchServer } from "./bench-server";

const { values } = parseArgs({
  options: { small: { type: "string", default: "2000" }, scrapes: { type: "string", default: "200" }, projects: { type: "string", default: "9" }, "database-url": { type: "string" } },
});
const SMALL = Number(values.small);
const SCRAPES = Number(values.scrapes);
const PROJECTS = Number(values.projects);

async function seed(base: string, token: string, from: number, to: number, prefix = ""): Promise<void> {
  for (let i = from; i < to; i += 500) {
    const records = Array.from({ length: Math.min(500, to - i) }, (_, k) => ({
      operation_id: `bench-metrics-${prefix}${i + k}`,
      tool: { name: "crm.update_contact" },
      intent: { target: "crm contact", effect: "set the phone" },
      receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" },
    }));
    const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ records }) });
    if (res.status !== 200) throw new Error(`seeding answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  }
}

/** ms per request of each kind, the two alternating. */
async function time(base: string, token: string): Promise<{ scrape: number; live: number; bytes: number }> {
  let scrape = 0;
  let live = 0;
  let bytes = 0;
  for (let i = 0; i < SCRAPES; i++) {
    let t = performance.now();
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`a scrape answered ${res.status}: ${text.slice(0, 300)}`);
    scrape += performance.now() - t;
    bytes = text.length;
    t = performance.now();
    await (await fetch(`${base}/api/health/live`)).text();
    live += performance.now() - t;
  }
  return { scrape: scrape / SCRAPES, live: live / SCRAPES, bytes };
}

async function main() {
  const tmp = values["database-url"] ? null : mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-metrics-"));
  const url = values["database-url"] ?? `file:${path.join(tmp!, "bench.db")}`;
  const { base, token, server, env } = await startBenchServer(url, "ingest,metrics,admin");
  try {
    await seed(base, token, 0, SMALL);
    await time(base, token); // warm-up: first requests compile and fill caches
    const small = await time(base, token);
    await seed(base, token, SMALL, SMALL * 10);
    const large = await time(base, token);
    const row = (n: number, r: typeof small) => `${n.toLocaleString("en").padStart(8)} operations: ${r.scrape.toFixed(2)} ms a scrape (${(r.bytes / 1024).toFixed(1)} KiB), ${r.live.toFixed(2)} ms a /api/health/live; scrape/live ${(r.scrape / r.live).toFixed(2)}×`;
    console.log(`bench:metrics on ${url.startsWith("file:") ? "SQLite" : "PostgreSQL"}, ${SCRAPES} scrapes at each size, one at a time`);
    console.log(row(SMALL, small));
    console.log(row(SMALL * 10, large));
    console.log(`scrape at ${(SMALL * 10).toLocaleString("en")} / at ${SMALL.toLocaleString("en")} operations: ${(large.scrape / small.scrape).toFixed(2)}×`);
    if (PROJECTS > 0) {
      for (let k = 0; k < PROJECTS; k++) {
        const slug = `bench-${k}`;
        const made = await fetch(`${base}/api/v1/projects`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ slug, name: `Bench ${k}` }) });
        const body = (await made.json()) as { ready?: boolean };
        if (made.status !== 201 || !body.ready) throw new Error(`creating ${slug} answered ${made.status} ${JSON.stringify(body).slice(0, 200)}`);
        await seed(base, addProjectBenchToken(env, "bench@bench.test", slug, "ingest"), 0, Math.ceil(SMALL / 10), `${slug}-`);
      }
      await time(base, token); // the new databases' first reads
      const many = await time(base, token);
      console.log(row(SMALL * 10, many).replace("operations:", `operations and ${PROJECTS} more projects of ${Math.ceil(SMALL / 10).toLocaleString("en")}:`));
      console.log(`scrape with ${PROJECTS + 1} projects / with 1: ${(many.scrape / large.scrape).toFixed(2)}× (${((many.scrape - large.scrape) / PROJECTS).toFixed(2)} ms a project)`);
    }
  } finally {
    await stopBenchServer(server);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
