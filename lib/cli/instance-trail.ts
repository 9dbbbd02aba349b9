/**
 * The instance's security trail on the command line (lib/store/chain/instance-chain.ts):
 * `audit:verify --instance` walks it from the genesis hash and holds it against its signed
 * checkpoints; `audit:export --instance --out FILE` writes it as NDJSON, which
 * `audit:verify --file` checks as any one-chain trail; `audit:checkpoint --instance` signs its head now.
 */
import { parseArgs } from "node:util";
import { pinnedKey } from "./pinned-key";

export class TrailUsageError extends Error {}

export async function verifyInstanceTrailCommand(args: string[], actor: string): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { key: { type: "string" } }, strict: false, allowPositionals: true });
  const unknown = [...positionals, ...Object.keys(values).filter((k) => k !== "key").map((k) => `--${k}`)];
  if (unknown.length) throw new TrailUsageError(`audit:verify --instance takes only --key (given: ${unknown.join(" ")}); to check an exported trail, use audit:verify --file`);
  const pinned = pinnedKey(typeof values.key === "string" ? values.key : undefined);
  const [{ verifyInstanceTrail }, { keyFingerprint }] = await Promise.all([import("@/lib/store/chain/instance-checkpoints"), import("@/lib/domain/checkpoint")]);
  const { verdict, checkpoints, checks, problem } = await verifyInstanceTrail({ pinnedKey: pinned?.key, announceAs: actor, onProgress: (n) => process.stderr.write(`\rchecked ${n.toLocaleString()} records`) });
  if (!verdict.ok) {
    console.error(`the instance's security trail is broken at seq ${verdict.badSeq}: ${verdict.problem} (${verdict.count} records verified before it)`);
    return 1;
  }
  if (!verdict.count) {
    console.log("the instance's security trail is empty: nothing about people or projects has been recorded here yet");
    return 0;
  }
  console.log(`the instance's security trail is intact: ${verdict.count.toLocaleString()} records, head ${verdict.head}`);
  for (const [i, c] of checks.entries()) {
    if (c.ok) console.log(`checkpoint #${i + 1} (size ${c.size}, signed ${checkpoints[i].time} by key ${keyFingerprint(checkpoints[i].key)}): matches`);
    else console.error(`checkpoint #${i + 1}: ${c.problem}`);
  }
  if (!checkpoints.length) console.log("no checkpoint was checked: nothing here proves that the tail of the trail was not cut off or rewritten");
  else if (pinned) console.log(`signatures checked against the pinned key ${keyFingerprint(pinned.key)} (from ${pinned.from})`);
  else console.log("note: signatures were checked only against the key each checkpoint carries; pin the key you trust with --key PUBLIC.pem or RECONCILE_CHECKPOINT_PUBLIC_KEY.");
  return problem ? 1 : 0;
}

export async function exportInstanceTrailCommand(args: string[], actor: string): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: "string" }, format: { type: "string" } } });
  if (!values.out) throw new TrailUsageError("--out is required");
  if (values.format !== undefined && values.format !== "ndjson") throw new TrailUsageError("--format: the instance's trail is exported as ndjson only");
  const out = values.out;
  const { recordTrailExport, securityTrailText } = await import("@/lib/api/security-trail");
  await recordTrailExport(actor, null);
  const bytes = await (await import("./write-whole")).writeWhole(out, securityTrailText(), "the trail");
  console.log(`wrote ${out} (${bytes.toLocaleString()} bytes, the instance's security trail; check it with audit:verify --file ${out})`);
  return 0;
}

export async function checkpointInstanceTrailCommand(args: string[]): Promise<number> {
  if (args.length) throw new TrailUsageError(`audit:checkpoint --instance takes no other options (given: ${args.join(" ")})`);
  const [{ latestInstanceCheckpoint, writeInstanceCheckpoint }, { formatCheckpoint }] = await Promise.all([import("@/lib/store/chain/instance-checkpoints"), import("@/lib/domain/checkpoint")]);
  const c = (await writeInstanceCheckpoint()) ?? (await latestInstanceCheckpoint());
  if (!c) {
    console.error("the instance's security trail is empty: nothing to sign");
    return 1;
  }
  process.stdout.write(formatCheckpoint(c));
  return 0;
}

/** The `--instance` forms of the audit commands, by name. */
export function instanceTrailCommands(actor: string): Record<string, (args: string[]) => Promise<number>> {
  return {
    "audit:verify": (args) => verifyInstanceTrailCommand(args, actor),
    "audit:export": (args) => exportInstanceTrailCommand(args, actor),
    "audit:checkpoint": checkpointInstanceTrailCommand,
  };
}
