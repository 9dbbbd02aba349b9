/**
 * The instance's security trail on the command line (lib/store/chain/instance-chain.ts):
 * `audit:verify --instance` walks it from the genesis hash; `audit:export --instance --out FILE`
 * writes it as NDJSON, which `audit:verify --file` checks as any one-chain trail.
 */
import { parseArgs } from "node:util";

export class TrailUsageError extends Error {}

export async function verifyInstanceTrailCommand(args: string[]): Promise<number> {
  if (args.length) throw new TrailUsageError(`audit:verify --instance takes no other options (given: ${args.join(" ")}); to check an exported trail, use audit:verify --file`);
  const { verifyInstanceChain } = await import("@/lib/store/chain/instance-chain");
  const verdict = await verifyInstanceChain((n) => process.stderr.write(`\rchecked ${n.toLocaleString()} records`));
  if (!verdict.ok) {
    console.error(`the instance's security trail is broken at seq ${verdict.badSeq}: ${verdict.problem} (${verdict.count} records verified before it)`);
    return 1;
  }
  console.log(
    verdict.count
      ? `the instance's security trail is intact: ${verdict.count.toLocaleString()} records, head ${verdict.head}`
      : "the instance's security trail is empty: nothing about people or projects has been recorded here yet",
  );
  return 0;
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
