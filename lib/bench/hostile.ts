/**
 * `npm run bench:hostile`: each maximum-size hostile ingest shape (lib/reliability/hostile.ts)
 * sent to the real production server on a fresh embedded SQLite database (or
 * `--database-url postgresql://…`, an empty database made for the run), with `/api/health`
 * asked every 100 ms meanwhile. Prints, per shape, the answer, the time it took and the worst
 * health latency during it. Asserts nothing (docs/BENCHMARKS.md); hostile.rtest.ts holds the bound.
 *
 * Needs a build (`npm run build`). Options: --runs N (each shape N times, default 3), --database-url.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { hostileShapes, itemStatuses, sendWithHealthPolls } from "../reliability/hostile";
import { prepareHostile } from "../reliability/hostile-setup";
import { startApp } from "../reliability/harness";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" }, "database-url": { type: "string" } } });

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-hostile-"));
  const url = values["database-url"] || `file:${path.join(tmp, "hostile.db")}`;
  const { token } = await prepareHostile(url);
  const app = await startApp(url);
  try {
    const rows: string[] = [];
    for (const shape of hostileShapes(`bench-${process.pid}`)) {
      const body = shape.body();
      for (let run = 1; run <= Number(values.runs); run++) {
        const r = await sendWithHealthPolls(app.base, token, body);
        const row = `| ${shape.name} | ${(r.bytes / 1024 / 1024).toFixed(2)} MiB | ${run} | ${itemStatuses(r)} | ${Math.round(r.ms)} | ${Math.round(r.healthWorstMs)} (${r.healthPolls} polls${r.healthFailures ? `, ${r.healthFailures} failed` : ""}) |`;
        console.log(row);
        rows.push(row);
      }
    }
    console.log(`\n| shape | body | run | answer | ms | worst /api/health ms |\n|---|--:|--:|---|--:|--:|\n${rows.join("\n")}`);
  } finally {
    await app.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
