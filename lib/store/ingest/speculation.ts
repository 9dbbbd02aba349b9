import "server-only";
import type { ChainHead } from "@/lib/domain/chains";
import { predictHead, sameHead, type Written } from "@/lib/domain/speculation";
import { chainCountIfKnown, linkEntries, lockChain, singleChainHead, storeLinked, type Linked } from "../chain/chain";
import { provider } from "../db/database";
import { sqlReadSnapshot, sqlWriteTransaction } from "../db/db";
import { decideBatch, ingestRecords, operationIdsOf, planWrite, readBasis, writeDecided, type Decided, type IngestResult, type ValidRecord, type WritePlan } from "./records";
import { readAuditRates } from "../projection/metrics-projection";
import { ingestPacer } from "../db/pace";
import { verifierToolsOf } from "./verifier-schedule";
import { activeVerifiersFor } from "../settings/verifiers";

export type { Written };

/**
 * Deciding a group before the chain lock, on PostgreSQL with one chain (bench:ingest: a group's
 * deciding and hashing were ~22 ms of the ~45 ms of JavaScript its transaction spent holding the
 * lock, while the database sat idle; and the database's work on the previous group's rows, at
 * its COMMIT, left this thread idle).
 *
 * While a group's transaction commits, the lane (ingest-queue.ts) takes the next group and
 * *speculates* it: reads its basis (ingest-records.ts) in a snapshot of committed state on
 * another connection, decides it, and links its chain records after the head it expects the
 * chain to have when it gets the lock. Then the group's transaction takes the lock and reads the
 * head. If the head is the expected one, the speculation holds and is stored as it is; if not
 * (another instance appended, the previous group failed), the group is decided again under the
 * lock, as ingestRecords does. Either way the records get what deciding them one after another
 * under the lock would give them. A guess also computes what storing the group writes
 * (planWrite), with the settings those writes read (audit sampling rates, the verifiers of the
 * group's tools) from the same snapshot.
 *
 * Why the head is enough: every change to what deciding reads (an operation's identity row, its
 * stage records, its corrections) and to those settings is an append to the chain, in the
 * transaction that makes it; and a head (seq and hash) names one state of the chain. So a basis
 * read in a snapshot whose head is H is still current while the head is H. The one exception is planned for: a snapshot
 * taken while the previous group of this lane was committing (its head is that group's start)
 * misses that group's records, so the next group is only speculated when it names none of that
 * group's operations, and is then expected to follow that group's end (predictHead).
 */

/**
 * A group decided and linked ahead of its transaction, after the head it expects to find, with
 * what storing it writes (its projection, search documents and answers: planWrite).
 */
export type Speculation = { ids: string[]; seen: ChainHead; predicted: ChainHead; decided: Decided; linked: Linked; planned: WritePlan };

/** How speculations fared in this process (bench:ingest prints them; a test reads them). */
export const speculationCounts = { held: 0, missed: 0 };

/** Whether groups can be decided ahead here: PostgreSQL's own ingest pool, one chain. */
export function canSpeculate(): boolean {
  return chainCountIfKnown() === 1 && provider() === "postgresql" && process.env.RECONCILE_PG_DIRECT !== "off";
}

/**
 * Decides and links `records` ahead of their transaction, or null where that cannot help or is
 * not safe: several chains, SQLite, or a group sharing an operation with `before`.
 */
export async function speculate(records: ValidRecord[], before: Written | null): Promise<Speculation | null> {
  if (chainCountIfKnown() !== 1 || !records.length) return null;
  const ids = operationIdsOf(records);
  if (before && ids.some((id) => before.ids.has(id))) return null;
  // One snapshot for everything the group's writes read: its head, the group's basis, and the
  // settings (audit rates, the verifiers of its tools). A change to any of them is an append
  // to the chain, so all of it is current while the head is the one expected.
  const spec = await sqlReadSnapshot(async (sql): Promise<Speculation | null> => {
    const seen = await singleChainHead(sql);
    const basis = await readBasis(sql, ids);
    const predicted = predictHead(seen, ids, before);
    if (!predicted) return null;
    const rates = await readAuditRates(sql);
    const pace = ingestPacer();
    const decided = await decideBatch(records, basis, pace);
    const linked = await linkOne(decided, predicted, pace);
    await pace();
    const planned = planWrite(decided, linked.records);
    const verifiers = await activeVerifiersFor(sql, verifierToolsOf(linked.records, planned.projection.states));
    return { ids, seen, predicted, decided, linked, planned: { ...planned, settings: { rates, verifiers } } };
  });
  return spec ?? null;
}

const linkOne = (decided: Decided, head: ChainHead, pace: () => Promise<void>) =>
  linkEntries(decided.entries, { chainOfEntry: decided.entries.map(() => 0), heads: new Map([[0, head]]), seqs: null, recordedAt: new Date().toISOString(), pace });

/**
 * One group's transaction (a lane's, ingest-queue.ts): with one chain, the lock and the head, then
 * the speculation if it holds, or the group decided here; with several, ingestRecords. `written`
 * hears the heads as soon as the group's chain records are linked, before its projection and its
 * writes, so that the lane can speculate its next group while they run (if this transaction then
 * fails, the next group's guess misses and it is decided again under the lock).
 */
export async function ingestGroup(
  records: ValidRecord[],
  spec: Speculation | null,
  written?: (w: Written, guess: "held" | "missed" | null) => void,
): Promise<IngestResult[]> {
  if (chainCountIfKnown() !== 1) return ingestRecords(records);
  return sqlWriteTransaction(async (tx) => {
    const ids = spec?.ids ?? operationIdsOf(records);
    await lockChain(tx, ids);
    const start = await singleChainHead(tx);
    let decided: Decided;
    let linked: Linked;
    let planned: WritePlan | undefined;
    const held = spec !== null && sameHead(spec.predicted, start);
    if (held) {
      ({ decided, linked, planned } = spec);
      speculationCounts.held++;
    } else {
      if (spec) speculationCounts.missed++;
      const pace = ingestPacer({ holdsLock: true });
      decided = await decideBatch(records, await readBasis(tx, ids), pace);
      linked = await linkOne(decided, start, pace);
      // The settings the writes read, read now, before any of the group's rows is sent: a read
      // after them waits for the database to have written them all (SQLite's writer thread,
      // PostgreSQL's held writes), and the request thread with it. As a speculation reads them.
      const plan = planWrite(decided, linked.records);
      const rates = await readAuditRates(tx);
      const verifiers = await activeVerifiersFor(tx, verifierToolsOf(linked.records, plan.projection.states));
      planned = { ...plan, settings: { rates, verifiers } };
    }
    await storeLinked(tx, linked, 1);
    // The heads are known once the records are linked: told now, the lane decides its next group
    // while this one's projection is written and its rows are at the database (the bulk of the
    // database's work on them), not only during COMMIT.
    written?.({ start, end: linked.heads.get(0)!, ids: new Set(ids) }, spec ? (held ? "held" : "missed") : null);
    return writeDecided(tx, decided, linked.records, planned);
  });
}
