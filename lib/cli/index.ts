/**
 * The command line (`npm run cli -- <command>`): the same use cases as the HTTP API.
 * Runs under tsx with the react-server condition, so lib/store's `server-only` guard lets it in.
 */
import { parseArgs } from "node:util";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { ApiError } from "@/lib/api/errors";
import { ChainVerifier, type ChainRecord } from "@/lib/domain/hash";
import { createApiToken } from "@/lib/store/api-tokens";
import { disconnect } from "@/lib/store/db";
import { loadDemoData } from "@/lib/store/demo";
import { rebuildProjections } from "@/lib/store/rebuild-projections";
import { createUser } from "@/lib/store/users";
import { verifyStoredChain } from "@/lib/store/verify-chain";
import { runDbCommand } from "./schema-engine";

const HELP = `Reconcile command line: npm run cli -- <command> [options]

  users:add --email E --password P --role viewer|reviewer|admin
  tokens:add --email E --scopes ingest,read,export,review --name N
  audit:verify [--file EXPORT.ndjson]
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
    const { values } = parseArgs({ args, options: { file: { type: "string" } } });
    const verdict = values.file ? await verifyFile(values.file) : await verifyStoredChain();
    if (verdict.ok) {
      console.log(`chain intact: ${verdict.count} records, head ${verdict.head}`);
      return 0;
    }
    console.error(`chain broken at seq ${verdict.badSeq}: ${verdict.problem} (${verdict.count} records verified before it)`);
    return 1;
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

/** Verifies an NDJSON export line by line (streamed: any size). */
async function verifyFile(file: string) {
  const verifier = new ChainVerifier();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (!line.trim()) continue;
    let record: ChainRecord & { kind: string };
    try {
      record = JSON.parse(line);
    } catch {
      return { ok: false as const, badSeq: verifier.verdict().count + 1, count: verifier.verdict().count, problem: `line ${lineNo} is not JSON` };
    }
    if ((record as { kind: string }).kind === "checkpoint") continue;
    if (!verifier.push(record)) break;
  }
  return verifier.verdict();
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
