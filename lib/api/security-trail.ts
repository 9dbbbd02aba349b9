import "server-only";
import { z } from "zod";
import { ndjsonLine } from "@/lib/domain/audit-format";
import { instanceEvents } from "@/lib/store/chain/instance-chain";
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

/** The trail as text chunks of about 64 KB (the HTTP stream and the command line's file alike). */
export async function* securityTrailText(): AsyncGenerator<string> {
  let batch = "";
  for await (const r of instanceEvents()) {
    batch += ndjsonLine(r);
    if (batch.length >= 64 * 1024) {
      yield batch;
      batch = "";
    }
  }
  if (batch) yield batch;
}
