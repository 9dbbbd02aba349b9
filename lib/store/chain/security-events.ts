import "server-only";
import { securityEvent, type SecurityEvent } from "@/lib/domain/security-events";
import { appendToChain } from "./chain";
import type { Tx } from "../db/database";

/**
 * Appends a security event inside the caller's transaction: if the event cannot be written,
 * the action it records fails with it.
 */
export async function recordSecurityEvent(tx: Tx, actor: string | null, event: SecurityEvent): Promise<void> {
  await appendToChain(tx, [{ kind: "security", operation_id: null, actor, payload: securityEvent(event) }]);
}
