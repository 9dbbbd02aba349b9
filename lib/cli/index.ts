/**
 * The command line (`npm run cli -- <command>`): the same use cases as the HTTP API.
 * Runs under tsx with the react-server condition, so lib/store's `server-only` guard lets it in.
 */
import { cliActor } from "./cli-actor";
import { parseArgs } from "node:util";
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { checkAgainstCheckpoints } from "@/lib/domain/audit-verify";
import { checkpointSeqs, formatCheckpoint, keyFingerprint, parseCheckpoint, type Checkpoint } from "@/lib/domain/checkpoint";
import { MAX_CHAINS, MultiChainVerifier, type ChainHead } from "@/lib/domain/chains";
import type { ChainRecord } from "@/lib/domain/hash";
import type { SealedClaim } from "@/lib/domain/sealed-rows";
import { inInstance, inProject } from "@/lib/store/db/project-context";
import { KeyUsageError, pinnedKey } from "./pinned-key";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";

/*
 * Each command loads the modules it needs when it runs (`await import`), not all of them at
 * start: a command is a process of its own, and the store, the export's stream, the demo data
 * and the schema engine together took half a second to load before anything ran (the test
 * suite starts the command line a few hundred times).
 */
const store = {
  db: () => import("@/lib/store/db/db"),
  checkpoints: () => import("@/lib/store/chain/checkpoints"),
  projects: () => import("./projects"),
};

const HELP = `Reconcile command line: npm run cli -- <command> [options]

  users:add --email E --password P --role viewer|reviewer|admin [--project S]
                               (an admin of the default project is an instance admin)
  tokens:add --email E --scopes ingest,verify,read,export,review --name N [--project S]
  projects:add --slug S [--name N] [--retention-days D]
  projects:list
  members:add --project S --email E --role viewer|reviewer|admin
  --project S (any command below): work on project S (default: the default project)
  audit:verify [--file EXPORT.ndjson [--subset]] [--checkpoint CHECKPOINT.txt] [--key PUBLIC.pem] [--archive DIR_OR_URL]
                               --key (or RECONCILE_CHECKPOINT_PUBLIC_KEY): only checkpoints signed by this key count
                               --archive: walk the sealed segments too, then the live chain, end to end
  archive:seal                 seal what retention (RECONCILE_RETENTION_DAYS) lets go now, as the daily job does
  audit:export --format ndjson|csv|json --out FILE [--since T] [--until T] [--operation-id ID] [--trajectory-id ID]
  audit:verify --instance [--key PUBLIC.pem]  the instance's own security trail (sign-in, users, tokens, projects, members)
  audit:export --instance --out FILE   that trail as NDJSON (audit:verify --file checks it)
  audit:checkpoint --instance  sign that trail's size and head now
  audit:checkpoint             sign the chain's current size and head now; prints the checkpoint
  projections:rebuild
  backup --out FILE            a consistent copy of the database while the server runs (SQLite's
                               backup API; pg_dump on PostgreSQL); says each chain's head it holds
  restore --from FILE [--force]  into DATABASE_URL (a new database unless --force), then verifies the chain
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

/** Set by main to the command being run (./cli-actor.ts): what the Security log names. */
let CLI_ACTOR = cliActor("(no command)");

/** The command-line form of a usage error of another module's (`--out is required`): printed with the help. */
const usageErrors = async () => {
  const [{ BackupUsageError }, { ProjectUsageError }, { TrailUsageError }] = await Promise.all([import("./backup"), store.projects(), import("./instance-trail")]);
  return [UsageError, BackupUsageError, ProjectUsageError, TrailUsageError, KeyUsageError];
};

const commands: Record<string, (args: string[]) => Promise<number>> = {
  backup: async (args) => (await import("./backup")).backupCommand(args),
  "archive:seal": async () => (await import("./archive")).archiveSealCommand(CLI_ACTOR),
  restore: async (args) => (await import("./backup")).restoreCommand(args),
  async "users:add"(args) {
    const { values } = parseArgs({ args, options: { email: { type: "string" }, password: { type: "string" }, role: { type: "string" }, project: { type: "string" } } });
    const [{ createUser }, { projectIdOf }] = await Promise.all([import("@/lib/store/people/users"), store.projects()]);
    const user = await createUser({ email: need(values, "email"), password: need(values, "password"), role: need(values, "role"), project: await projectIdOf(values.project), actor: CLI_ACTOR, via: "cli" });
    console.log(`created ${user.role} ${user.email}${values.project ? ` in ${values.project}` : ""}`);
    return 0;
  },
  async "tokens:add"(args) {
    const { values } = parseArgs({ args, options: { email: { type: "string" }, scopes: { type: "string" }, name: { type: "string" }, project: { type: "string" } } });
    const scopes = need(values, "scopes").split(",").map((s) => s.trim()).filter(Boolean);
    const [{ createApiToken }, { projectIdOf }] = await Promise.all([import("@/lib/store/people/api-tokens"), store.projects()]);
    const t = await createApiToken({ email: need(values, "email"), name: need(values, "name"), scopes, project: await projectIdOf(values.project), actor: CLI_ACTOR });
    console.log(`created token ${t.prefix}…${t.last4} for project ${t.project} with scopes ${t.scopes.join(",")}; it is shown once:`);
    console.log(t.token);
    return 0;
  },
  async "audit:verify"(args) {
    const { values } = parseArgs({ args, options: { file: { type: "string" }, subset: { type: "boolean" }, checkpoint: { type: "string" }, key: { type: "string" }, archive: { type: "string" } } });
    if (values.archive !== undefined && values.file) throw new UsageError("--archive verifies the database's chain with its archive; it does not go with --file");
    const pinned = pinnedKey(values.key);
    const external = values.checkpoint ? parseCheckpoint(readFileSync(values.checkpoint, "utf8")) : null;
    if (values.checkpoint && !external) throw new UsageError(`${values.checkpoint} is not a reconcile checkpoint`);
    const found: Checkpoint[] = [];
    let archiveOk = true;
    const watch = external ? checkpointSeqs(external) : undefined;
    let result;
    if (values.file) {
      result = await verifyFile(values.file, { allowGaps: values.subset ?? false, watch, checkpoints: found });
    } else {
      const [{ allCheckpoints }, { verifyStoredChain }] = await Promise.all([store.checkpoints(), import("@/lib/store/chain/verify-chain")]);
      const stored = await allCheckpoints();
      result = await verifyStoredChain(undefined, { watch: [...(watch ?? []), ...stored.flatMap(checkpointSeqs)] });
      const { sealed } = result;
      // Checkpoints within what retention sealed are checked against the archive (--archive), not here.
      found.push(...stored.filter((c) => !sealed || c.heads || c.size > sealed.seq));
      const archived = values.archive !== undefined ? ([] as SealedClaim[]) : null;
      if (values.archive !== undefined && !(await (await import("./archive")).verifyArchive(values.archive, { sealed, checkpoints: stored, pinnedKey: pinned?.key }, archived!))) archiveOk = false;
      // Each sealed_through row (what lets the triggers allow a delete) must be retention's own.
      const [{ sealedRowsVerdict }, { retentionOffReason }] = await Promise.all([import("@/lib/store/archive/sealed-rows"), import("@/lib/retention/jobs")]);
      const rows = await sealedRowsVerdict({ chains: result.chains, retentionOff: await retentionOffReason(), live: result.sealedClaims, archived });
      if (!rows.ok) {
        archiveOk = false;
        console.error(rows.problem);
        const { announceChainFailure } = await import("@/lib/store/work/webhook-outbox");
        await announceChainFailure({ badSeq: null, problem: rows.problem, checked: result.verdict.count }, CLI_ACTOR);
      } else if (rows.rows) {
        const unchecked = rows.unchecked ? `; ${rows.unchecked} earlier row(s) are named by records that were sealed in turn (audit:verify --archive checks those)` : "";
        console.log(`sealed_through: ${rows.rows} row(s), each named by a chained archive.sealed record of the same range and head${unchecked}`);
      }
      if (sealed && rows.ok) {
        console.log(
          `starting at the last sealed head: seq ${sealed.seq} (sealed ${sealed.sealedAt}), hash ${sealed.hash}; the records up to it are in the archive (audit:verify --archive DIR_OR_URL checks them too)`,
        );
      }
    }
    const { verdict, hashes, counts } = result;
    let ok = verdict.ok;
    if (verdict.ok) {
      const where = verdict.chains ? `in ${verdict.chains.length} chains, Merkle root of the heads` : "head";
      console.log(`chain intact: ${verdict.count} records${values.subset ? " (each checked on its own; contiguous ones linked)" : ""}, ${where} ${verdict.head}`);
    }
    else console.error(`chain broken at seq ${verdict.badSeq}: ${verdict.problem} (${verdict.count} records verified before it)`);
    const checks = external ? [external] : values.subset ? [] : found;
    for (const [i, c] of checkAgainstCheckpoints(verdict, hashes, checks, pinned?.key, counts).entries()) {
      if (c.ok) console.log(`checkpoint ${external ? values.checkpoint : `#${i + 1}`} (size ${c.size}, signed ${checks[i].time} by key ${keyFingerprint(checks[i].key)}): matches`);
      else {
        ok = false;
        console.error(`checkpoint ${external ? values.checkpoint : `#${i + 1}`}: ${c.problem}`);
      }
    }
    if (!ok && !values.file) {
      const bad = verdict.ok ? checkAgainstCheckpoints(verdict, hashes, checks, pinned?.key, counts).find((c) => !c.ok) : undefined;
      const { announceChainFailure, chainFailure } = await import("@/lib/store/work/webhook-outbox");
      await announceChainFailure(chainFailure(verdict, bad), CLI_ACTOR);
    }
    if (!checks.length) console.log("no checkpoint was checked: nothing here proves that the tail of the chain was not cut off or rewritten");
    else if (pinned) console.log(`signatures checked against the pinned key ${keyFingerprint(pinned.key)} (from ${pinned.from})`);
    else {
      const keys = [...new Set(checks.map((c) => keyFingerprint(c.key)))].join(", ");
      console.log(
        `note: signatures were checked only against the key each checkpoint carries (${keys}); anyone who can rewrite the chain can sign with a key of their own. Pin the key you trust with --key PUBLIC.pem or RECONCILE_CHECKPOINT_PUBLIC_KEY.`,
      );
    }
    return ok && archiveOk ? 0 : 1;
  },
  async "audit:export"(args) {
    const { values } = parseArgs({
      args,
      options: { format: { type: "string" }, out: { type: "string" }, since: { type: "string" }, until: { type: "string" }, "operation-id": { type: "string" }, "trajectory-id": { type: "string" } },
    });
    const out = need(values, "out");
    const input = { format: values.format ?? "ndjson", since: values.since, until: values.until, operation_id: values["operation-id"], trajectory_id: values["trajectory-id"] };
    const [{ exportQuerySchema, recordExport }, { exportText }, { describeRefusal }] = await Promise.all([
      import("@/lib/store/chain/audit-export"),
      import("@/lib/api/audit-stream"),
      import("@/lib/domain/refusal"),
    ]);
    const parsed = exportQuerySchema.safeParse(input);
    if (!parsed.success) {
      // The options by their command-line names: "--operation-id must not be empty".
      const { message } = describeRefusal(parsed.error, { input, schema: exportQuerySchema, root: "export" });
      throw new UsageError(message.replace(/(^|; )([a-z_]+)(?= )/g, (_, sep: string, name: string) => `${sep}--${name.replace("_", "-")}`));
    }
    await recordExport(CLI_ACTOR, parsed.data, null);
    const bytes = await (await import("./write-whole")).writeWhole(out, exportText(parsed.data), "the export");
    console.log(`wrote ${out} (${bytes.toLocaleString()} bytes, ${parsed.data.format})`);
    return 0;
  },
  async "audit:checkpoint"() {
    const { latestCheckpoint, writeCheckpoint } = await store.checkpoints();
    const c = (await writeCheckpoint()) ?? (await latestCheckpoint());
    if (!c) {
      console.error("the chain is empty: nothing to sign");
      return 1;
    }
    process.stdout.write(formatCheckpoint(c));
    return 0;
  },
  async "projections:rebuild"() {
    const { rebuildProjections } = await import("@/lib/store/projection/rebuild");
    const r = await rebuildProjections((n) => process.stderr.write(`\rrebuilt ${n} operations`));
    process.stderr.write("\n");
    console.log(`projection rebuilt from the records: ${r.operations} operations`);
    return 0;
  },
  async "demo:load"() {
    const r = await (await import("@/lib/store/ingest/demo")).loadDemoData();
    console.log(r.alreadyLoaded ? "demo data already loaded" : `loaded ${r.loaded} demo operations`);
    return 0;
  },
  async "db:deploy"(args) {
    await (await import("./schema-engine")).runDbCommand(["db:deploy", ...args]);
    return 0;
  },
  async "db:migrate"(args) {
    await (await import("./schema-engine")).runDbCommand(["db:migrate", ...args]);
    return 0;
  },
};

/** Verifies an NDJSON export line by line (streamed: any size); collects its checkpoints. */
async function verifyFile(file: string, opts: { allowGaps: boolean; watch?: number[]; checkpoints: Checkpoint[] }) {
  const lines0: Checkpoint[] = [];
  let chains: number | undefined;
  let start: { prevHash: string; prevSeq: number } | undefined;
  // Checkpoints ride at the end of an export; read them first so their sizes are watched. The
  // text test only skips parsing lines that cannot be one; what decides is the structure.
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (!line.includes('"checkpoint"') && !line.includes('"chains"') && !line.includes('"archive"')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue; // reported below as a bad line
    }
    const c = checkpointLine(value);
    if (c) lines0.push(c);
    const n = chainsLine(value);
    if (n !== null) chains ??= n;
    const a = archiveLine(value);
    if (a && !a.from_archive) start ??= { prevHash: a.head_hash, prevSeq: a.sealed_through };
  }
  // Records retention sealed and this export left out: the records continue from their head (said so).
  if (start) console.log(`starting at the sealed head the export names: seq ${start.prevSeq}, hash ${start.prevHash} (the records before it are in the archive)`);
  opts.checkpoints.push(...lines0.filter((c) => !start || c.heads || c.size > start.prevSeq));
  // A trail of several chains names their count first; an older export's checkpoints say it too.
  chains ??= lines0.find((c) => c.heads)?.heads?.length ?? 1;
  const verifier = new MultiChainVerifier(chains, { allowGaps: opts.allowGaps, watch: [...(opts.watch ?? []), ...lines0.flatMap(checkpointSeqs)], starts: start && chains === 1 ? [start] : undefined });
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { verdict: { ok: false as const, badSeq: verifier.verdict().count + 1, count: verifier.verdict().count, problem: `line ${lineNo} is not JSON` }, hashes: verifier.hashes, counts: verifier.counts };
    }
    if (chainsLine(value) !== null || archiveLine(value)) continue;
    if (isCheckpointLine(value)) {
      if (checkpointLine(value)) continue;
      return { verdict: { ok: false as const, badSeq: verifier.verdict().count + 1, count: verifier.verdict().count, problem: `line ${lineNo} is a checkpoint line without a size, head, time, key and signature` }, hashes: verifier.hashes, counts: verifier.counts };
    }
    if (!verifier.push(value as ChainRecord)) break;
  }
  return { verdict: verifier.verdict(), hashes: verifier.hashes, counts: verifier.counts };
}

/**
 * A checkpoint line of an export is one by its structure: a JSON object whose own top-level
 * `kind` is "checkpoint" and that has no `seq` (every chained record has one). Text inside a
 * payload — a receipt that says {"kind":"checkpoint"} — never makes a record a checkpoint.
 */
function isCheckpointLine(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && (v as Record<string, unknown>).kind === "checkpoint" && !Object.hasOwn(v, "seq");
}

function checkpointLine(v: unknown): Checkpoint | null {
  if (!isCheckpointLine(v)) return null;
  const { size, head, time, key, signature, heads } = v;
  if (!Number.isSafeInteger(size) || typeof head !== "string" || typeof time !== "string" || typeof key !== "string" || typeof signature !== "string") return null;
  if (heads === undefined) return { size: size as number, head, time, key, signature };
  const isHead = (h: unknown): h is ChainHead =>
    typeof h === "object" &&
    h !== null &&
    Number.isSafeInteger((h as { seq?: unknown }).seq) &&
    Number.isSafeInteger((h as { records?: unknown }).records) &&
    typeof (h as { hash?: unknown }).hash === "string";
  if (!Array.isArray(heads) || !heads.length || heads.length > MAX_CHAINS || !heads.every(isHead)) return null;
  return { size: size as number, head, time, key, signature, heads: heads.map((h) => ({ seq: h.seq, hash: h.hash, records: h.records })) };
}

/** The chain count line of a trail of several chains (`{"kind":"chains","chains":N}`, no seq), or null. */
/** An export's note about archived records (lib/api/audit-archive.ts): kind "archive", no seq. */
function archiveLine(v: unknown): { from_archive: boolean; sealed_through: number; head_hash: string } | null {
  if (typeof v !== "object" || v === null || Array.isArray(v) || Object.hasOwn(v, "seq")) return null;
  const { kind, from_archive, sealed_through, head_hash } = v as Record<string, unknown>;
  if (kind !== "archive" || typeof from_archive !== "boolean" || !Number.isSafeInteger(sealed_through) || typeof head_hash !== "string" || !/^[0-9a-f]{64}$/.test(head_hash)) return null;
  return { from_archive, sealed_through: sealed_through as number, head_hash };
}

function chainsLine(v: unknown): number | null {
  if (typeof v !== "object" || v === null || Array.isArray(v) || Object.hasOwn(v, "seq")) return null;
  const { kind, chains } = v as Record<string, unknown>;
  return kind === "chains" && Number.isInteger(chains) && (chains as number) >= 1 && (chains as number) <= MAX_CHAINS ? (chains as number) : null;
}

const INSTANCE_COMMANDS = new Set(["users:add", "tokens:add", "projects:add", "projects:list", "members:add", "db:deploy", "db:migrate"]);

/** `--project S` (or `--project=S`) taken out of a command's arguments. */
function projectOption(args: string[]): { project: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let project: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--project") {
      if (i + 1 >= args.length) throw new UsageError("--project needs a project's slug");
      project = args[++i];
    } else if (args[i].startsWith("--project=")) project = args[i].slice("--project=".length);
    else rest.push(args[i]);
  }
  return { project, rest };
}

async function main(): Promise<number> {
  // DATABASE_QUERY_TIMEOUT_MS (10 s) bounds what a request may wait on PostgreSQL; a command an
  // operator runs (a projection rebuild, a verification of millions of records) may take longer
  // a statement: an hour unless it is set.
  process.env.DATABASE_QUERY_TIMEOUT_MS ||= "3600000";
  const [command, ...args] = process.argv.slice(2);
  if (!command || command === "help" || command === "--help") {
    console.log(HELP);
    return command ? 0 : 2;
  }
  CLI_ACTOR = cliActor(command);
  // The projects' commands are ./projects.ts's own (projectCommands), loaded only when asked for.
  const run = commands[command] ?? (command.startsWith("projects:") || command.startsWith("members:") ? (await store.projects()).projectCommands(CLI_ACTOR)[command] : undefined);
  if (!run) {
    console.error(`unknown command ${command}\n\n${HELP}`);
    return 2;
  }
  try {
    // Commands about people and projects take --project themselves; every other works in the project it names.
    if (INSTANCE_COMMANDS.has(command)) return await inInstance(() => run(args));
    // The instance's own security trail, apart from every project's (./instance-trail.ts).
    if (args.includes("--instance")) {
      const trail = command.startsWith("audit:") ? (await import("./instance-trail")).instanceTrailCommands(CLI_ACTOR)[command] : undefined;
      if (!trail) throw new UsageError(`${command} has no --instance form (audit:verify, audit:export and audit:checkpoint have)`);
      const rest = args.filter((a) => a !== "--instance");
      return await inInstance(() => trail(rest));
    }
    const { project, rest } = projectOption(args);
    const named = project === undefined ? { id: DEFAULT_PROJECT, slug: DEFAULT_PROJECT } : await (await store.projects()).projectNamed(project);
    return await inProject(named, () => run(rest));
  } catch (e) {
    if ((await usageErrors()).some((kind) => e instanceof kind) || (e instanceof TypeError && (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"))) {
      console.error(`${command}: ${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const known = (await import("@/lib/api/errors")).knownError(e);
    if (known) {
      console.error(`${command}: ${known.message}`);
      return 1;
    }
    throw e;
  } finally {
    await (await store.db()).disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
