import "server-only";
import { isInstanceEvent, securityEvent, type SecurityEvent } from "@/lib/domain/security-events";
import { appendToChain } from "./chain";
import { appendInstanceEvent } from "./instance-chain";
import { workingOnInstance } from "../db/project-context";
import type { Tx } from "../db/database";

/**
 * Appends a security event inside the caller's transaction: if the event cannot be written,
 * the action it records fails with it. Work on the instance (`inInstance`: sign-in, users,
 * tokens, projects, members) goes to the instance's own chain; work in a project (its settings,
 * exports, refusals) to that project's chain, so that its trail can be handed over alone.
 */
export async function recordSecurityEvent(tx: Tx, actor: string | null, event: SecurityEvent): Promise<void> {
  const payload = securityEvent(event);
  if (workingOnInstance()) {
    await appendInstanceEvent(tx, actor, payload);
    return;
  }
  // An event about people or projects written in a project's chain would hide it from the
  // instance's: a store function that forgot instanceWriteTransaction fails here, in the tests.
  if (isInstanceEvent(payload.type)) throw new Error(`a ${payload.type} event is the instance's: write it in instanceWriteTransaction`);
  await appendToChain(tx, [{ kind: "security", operation_id: null, actor, payload }]);
}
