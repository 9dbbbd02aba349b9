/**
 * The command line (`npm run cli -- <command>`): the same use cases as the HTTP API.
 * Runs under tsx with the react-server condition, so lib/store's `server-only` guard lets it in.
 */
import { parseArgs } from "node:util";
import { createReadStream, createWriteStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { ApiError } from "@/lib/api/errors";
import { exportText } from "@/lib/api/audit-stream";
import { checkAgainstCheckpoints } from "@/lib/domain/audit-verify";
import { formatCheckpoint, parseCheckpoint, type Checkpoint } from "@/lib/domain/checkpoint";
import { ChainVerifier, type ChainRecord } from "@/lib/domain/hash";
import { describeIssues } from "@/lib/domain/wire";
import { exportQuerySchema, recordExport } from "@/lib/store/audit-export";
import { allCheckpoints, latestCheckpoint, writeCheckpoint } from "@/lib/store/checkpoints";
import { createApiToken } from "@/lib/store/api-tokens";
import { disconnect } from "@/lib/store/db";
import { loadDemoData } from "@/lib/store/demo";
import { rebuildProjections } from "@/lib/store/rebuild-projections";
import { createUser } from "@/lib/store/users";
import { verifyStoredChain } from "@/lib/store/verify-chain";
import { runDbCommand } from "./schema-engine";

const HELP = `Reconcile command line: npm run cli -- <command> [options]

  users:add --email E --password P --role viewer|reviewer|admin
  tokens:add --email E --scopes ingest,verify,read,export,review --name N
  audit:verify [--file EXPORT.ndjson [--subset]] [--checkpoint CHECKPOINT.txt]
  audit:export --format ndjson|csv|json --out FILE [--since T] [--until T] [--operation-id ID] [--trajectory-id ID]
  audit:checkpoint             sign the chain's current size and head now; prints the checkpoint
  projections:rebuild
  demo:load
  db:deploy                    apply pending migrations to DATABASE_URL
  db:migrate --name NAME       create a migration for SQLite and PostgreSQL

DATABASE_URL defaults to file:./data/reconcile.db.`;

class UsageError extends Error {}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || !v) throw new UsageError(`--${name} is required`);
  return v;
}

const CLI_ACTOR = `cli:${process.env.USER || "unknown"}`;

const commands: Record<string, (args: string[]) => Promise<number>> = {
  async "users:add"(args) {
    const { values } = parseArgs({ args, options: { email: { type: "string" }, password: { type: "string" }, role: { type: "string" } } });
    const user = await createUser({ email: need(values, "email"), password: need(values, "password"), role: need(values, "role"), actor: CLI_ACTOR, via: "cli" });
    console.log(`created ${user.role} ${user.email}`);
    return 0;
  },
  async "tokens:add"(args) {
    const { values } = parseArgs({ args, options: { email: { type: "string" }, scopes: { type: "string" }, name: { type: "string" } } });
    const scopes = need(values, "scopes").split(",").map((s) => s.trim()).filter(Boolean);
    const t = await createApiToken({ email: need(values, "email"), name: need(values, "name"), scopes, actor: CLI_ACTOR });
    console.log(`created token ${t.prefix}…${t.last4} with scopes ${t.scopes.join(",")}; it is shown once:`);
    console.log(t.token);
    return 0;
  },
  async "audit:verify"(args) {
    const { values } = parseArgs({ args, options: { file: { type: "string" }, subset: { type: "boolean" }, checkpoint: { type: "string" } } });
    const external = values.checkpoint ? parseCheckpoint(readFileSync(values.checkpoint, "utf8")) : null;
    if (values.checkpoint && !external) throw new UsageError(`${values.checkpoint} is not a reconcile checkpoint`);
    const found: Checkpoint[] = [];
    const watch = external ? [external.size] : undefined;
    let result;
    if (values.file) {
      result = await verifyFile(values.file, { allowGaps: values.subset ?? false, watch, checkpoints: found });
    } else {
      const stored = await allCheckpoints();
      found.push(...stored);
      result = await verifyStoredChain(undefined, { watch: [...(watch ?? []), ...stored.map((c) => c.size)] });
    }
    const { verdict, hashes } = result;
    let ok = verdict.ok;
    if (verdict.ok) console.log(`chain intact: ${verdict.count} records${values.subset ? " (each checked on its own; contiguous ones linked)" : ""}, head ${verdict.head}`);
    else console.error(`chain broken at seq ${verdict.badSeq}: ${verdict.problem} (${verdict.count} records verified before it)`);
    const checks = external ? [external] : values.subset ? [] : found;
    for (const [i, c] of checkAgainstCheckpoints(verdict, hashes, checks).entries()) {
      if (c.ok) console.log(`checkpoint ${external ? values.checkpoint : `#${i + 1}`} (size ${c.size}, signed ${checks[i].time}): matches`);
      else {
        ok = false;
        console.error(`checkpoint ${external ? values.checkpoint : `#${i + 1}`}: ${c.problem}`);
      }
    }
    return ok ? 0 : 1;
  },
  async "audit:export"(args) {
    const { values } = parseArgs({
      args,
      options: { format: { type: "string" }, out: { type: "string" }, since: { type: "string" }, until: { type: "string" }, "operation-id": { type: "string" }, "trajectory-id": { type: "string" } },
    });
    const out = need(values, "out");
    const parsed = exportQuerySchema.safeParse({
      format: values.format ?? "ndjson",
      since: values.since,
      until: values.until,
      operation_id: values["operation-id"],
      trajectory_id: values["trajectory-id"],
    });
    if (!parsed.success) throw new UsageError(describeIssues(parsed.error).map((i) => `--${i.path.replace("_", "-")}: ${i.message}`).join("; "));
    await recordExport(CLI_ACTOR, parsed.data, null);
    const file = createWriteStream(out);
    let bytes = 0;
    for await (const chunk of exportText(parsed.data)) {
      bytes += Buffer.byteLength(chunk);
      if (!file.write(chunk)) await new Promise<void>((r) => file.once("drain", () => r()));
    }
    await new Promise<void>((resolve, reject) => file.end((e?: Error | null) => (e ? reject(e) : resolve())));
    console.log(`wrote ${out} (${bytes.toLocaleString()} bytes, ${parsed.data.format})`);
    return 0;
  },
  async "audit:checkpoint"() {
    const c = (await writeCheckpoint()) ?? (await latestCheckpoint());
    if (!c) {
      console.error("the chain is empty: nothing to sign");
      return 1;
    }
    process.stdout.write(formatCheckpoint(c));
    return 0;
  },
  async "projections:rebuild"() {
    const r = await rebuildProjections((n) => process.stderr.write(`\rrebuilt ${n} operations`));
    process.stderr.write("\n");
    console.log(`projection rebuilt from the records: ${r.operations} operations`);
    return 0;
  },
  async "demo:load"() {
    const r = await loadDemoData();
    console.log(r.alreadyLoaded ? "demo data already loaded" : `loaded ${r.loaded} demo operations`);
    return 0;
  },
  async "db:deploy"(args) {
    await runDbCommand(["db:deploy", ...args]);
    return 0;
  },
  async "db:migrate"(args) {
    await runDbCommand(["db:migrate", ...args]);
    return 0;
  },
};

/** Verifies an NDJSON export line by line (streamed: any size); collects its checkpoints. */
async function verifyFile(file: string, opts: { allowGaps: boolean; watch?: number[]; checkpoints: Checkpoint[] }) {
  const lines0: Checkpoint[] = [];
  // Checkpoints ride at the end of an export; read them first so their sizes are watched.
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line.includes('"kind":"checkpoint"')) {
      try {
        const c = JSON.parse(line) as Checkpoint & { kind: string };
        lines0.push({ size: c.size, head: c.head, time: c.time, key: c.key, signature: c.signature });
      } catch {
        /* reported below as a bad line */
      }
    }
  }
  opts.checkpoints.push(...lines0);
  const verifier = new ChainVerifier(undefined, { allowGaps: opts.allowGaps, watch: [...(opts.watch ?? []), ...lines0.map((c) => c.size)] });
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (!line.trim()) continue;
    let record: ChainRecord & { kind: string };
    try {
      record = JSON.parse(line);
    } catch {
      return { verdict: { ok: false as const, badSeq: verifier.verdict().count + 1, count: verifier.verdict().count, problem: `line ${lineNo} is not JSON` }, hashes: verifier.hashes };
    }
    if ((record as { kind: string }).kind === "checkpoint") continue;
    if (!verifier.push(record)) break;
  }
  return { verdict: verifier.verdict(), hashes: verifier.hashes };
}

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (!command || command === "help" || command === "--help") {
    console.log(HELP);
    return command ? 0 : 2;
  }
  const run = commands[command];
  if (!run) {
    console.error(`unknown command ${command}\n\n${HELP}`);
    return 2;
  }
  try {
    return await run(args);
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"))) {
      console.error(`${command}: ${e.message}\n\n${HELP}`);
      return 2;
    }
    if (e instanceof ApiError) {
      console.error(`${command}: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
