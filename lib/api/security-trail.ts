import "server-only";
import { z } from "zod";
import { ndjsonLine } from "@/lib/domain/audit-format";
import { formatCheckpoint } from "@/lib/domain/checkpoint";
import { instanceEvents } from "@/lib/store/chain/instance-chain";
import { instanceCheckpoints } from "@/lib/store/chain/instance-checkpoints";
import { recordSecurityEvent } from "@/lib/store/chain/security-events";
import { instanceWriteTransaction } from "@/lib/store/db/db";

/**
 * The instance's security trail (lib/store/chain/instance-chain.ts) as an export: every record
 * from the genesis hash, as NDJSON lines in the audit export's shape, so that
 * `npm run cli -- audit:verify --file` checks it as any one-chain trail. Nothing filters it: a
 * part of a chain proves less than the whole, and the trail is small (people and sign-ins, not
 * operations).
 */
export const securityTrailQuerySchema = z.object({ format: z.literal("ndjson").default("ndjson") }).strict();

/** Every export of the trail is itself on it, before the first byte leaves. */
export async function recordTrailExport(actor: string, source: string | null): Promise<void> {
  await instanceWriteTransaction((tx) => recordSecurityEvent(tx, actor, { type: "audit.exported", format: "ndjson", filter: { trail: "instance" }, source }));
}

/**
 * The trail as text chunks of about 64 KB (the HTTP stream and the command line's file alike),
 * its signed checkpoints after the records as the project's export carries them (a line of kind
 * "checkpoint", no seq), each within what was exported.
 */
export async function* securityTrailText(): AsyncGenerator<string> {
  let batch = "";
  let last = 0;
  for await (const r of instanceEvents()) {
    batch += ndjsonLine(r);
    last = r.seq;
    if (batch.length >= 64 * 1024) {
      yield batch;
      batch = "";
    }
  }
  for (const c of await instanceCheckpoints()) if (c.size <= last) batch += ndjsonLine({ kind: "checkpoint", ...c, text: formatCheckpoint(c) });
  if (batch) yield batch;
}
