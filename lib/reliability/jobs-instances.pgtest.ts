import pg from "pg";
import { beforeAll, expect, it } from "vitest";
import { runJobsCrash } from "./jobs-crash";

const url = process.env.RELIABILITY_DATABASE_URL!;

beforeAll(async () => {
  if (!url?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("DROP SCHEMA IF EXISTS public CASCADE");
  await client.query("CREATE SCHEMA public");
  await client.end();
}, 60_000);

it("jobs on one PostgreSQL, three worker processes claiming at once, four SIGKILLs mid-work: every job done, each result recorded once", async () => {
  const report = await runJobsCrash({ url, processes: 3, jobs: 600, kills: 4 });
  console.log(JSON.stringify({ ...report, recordedTwice: report.recordedTwice.length, notRecorded: report.notRecorded.length }));
  expect(report.recordedTwice).toEqual([]);
  expect(report.notRecorded).toEqual([]);
  expect(report.done).toBe(report.jobs);
});
