"use server";

import { redirect } from "next/navigation";
import { knownError } from "@/lib/api/errors";
import { can } from "@/lib/domain/permissions";
import { currentPrincipal } from "@/lib/auth/session";
import { checkAgainstCheckpoints } from "@/lib/domain/audit-verify";
import { checkpointSeqs } from "@/lib/domain/checkpoint";
import { allCheckpoints } from "@/lib/store/chain/checkpoints";
import { startUserJob } from "@/lib/api/user-jobs";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { announceChainFailure, chainFailure } from "@/lib/store/work/webhook-outbox";
import { inInstance, inProject } from "@/lib/store/db/project-context";
import { verifyInstanceTrail } from "@/lib/store/chain/instance-checkpoints";
import { sealedRowsVerdict } from "@/lib/store/archive/sealed-rows";
import { retentionOffReason } from "@/lib/retention/jobs";

/** `busy`: refused because another verification or export of this user is running. */
export type VerifyState = { ok: boolean; message: string; busy?: boolean } | null;

/** Walks every link of the stored chain and holds it against every stored checkpoint. */
export async function verifyChainAction(): Promise<VerifyState> {
  const me = await currentPrincipal();
  if (!me) redirect("/login");
  if (!can(me, "audit:export")) return { ok: false, message: "You may not verify the audit trail." };
  // The chain of the project the page is in (lib/store/db/project-context.ts).
  return oneAtATime(me.userId, () => inProject(me.project, () => verifyProject(me.email)));
}

/** Walks every link of the instance's own security trail (sign-in, users, tokens, projects, members). */
export async function verifyInstanceTrailAction(): Promise<VerifyState> {
  const me = await currentPrincipal();
  if (!me) redirect("/login");
  if (!can(me, "instance:audit")) return { ok: false, message: "You may not verify the instance's security trail." };
  return oneAtATime(me.userId, async () => {
    const { verdict, checkpoints, problem } = await inInstance(() => verifyInstanceTrail({ announceAs: me.email }));
    if (problem) return { ok: false, message: `${problem[0].toUpperCase()}${problem.slice(1)}.` };
    if (!verdict.ok || !verdict.count) return { ok: true, message: "Empty: nothing has been recorded here yet." };
    return { ok: true, message: `Intact: all ${verdict.count.toLocaleString()} records link, up to seq ${verdict.lastSeq}; ${checkpoints.length} checkpoint${checkpoints.length === 1 ? " matches" : "s match"}.` };
  });
}

/** One verification or export at a time per user: walking a long chain is minutes of work. */
async function oneAtATime(userId: string, work: () => Promise<VerifyState>): Promise<VerifyState> {
  let release: () => Promise<void>;
  try {
    release = await startUserJob(userId, "A verification");
  } catch (e) {
    const known = knownError(e);
    if (known) return { ok: false, busy: true, message: `${known.message}.` };
    throw e;
  }
  try {
    return await work();
  } finally {
    await release();
  }
}

async function verifyProject(actor: string): Promise<VerifyState> {
  {
    const all = await allCheckpoints();
    const { verdict, hashes, counts, sealed, chains, sealedClaims } = await verifyStoredChain(undefined, { watch: all.flatMap(checkpointSeqs) });
    // Each sealed_through row (what lets the triggers allow a delete) must be retention's own.
    const rows = await sealedRowsVerdict({ chains, retentionOff: await retentionOffReason(), live: sealedClaims, archived: null });
    if (!rows.ok) {
      await announceChainFailure({ badSeq: null, problem: rows.problem, checked: verdict.count }, actor);
      return { ok: false, message: `${rows.problem[0].toUpperCase()}${rows.problem.slice(1)}.` };
    }
    // Checkpoints within what retention sealed are the archive's to check (audit:verify --archive).
    const checkpoints = all.filter((c) => !sealed || c.heads || c.size > sealed.seq);
    const bad = verdict.ok ? checkAgainstCheckpoints(verdict, hashes, checkpoints, undefined, counts).find((c) => !c.ok) : undefined;
    if (!verdict.ok || (bad && !bad.ok)) await announceChainFailure(chainFailure(verdict, bad), actor);
    if (!verdict.ok) return { ok: false, message: `Broken at seq ${verdict.badSeq}: ${verdict.problem}.` };
    if (bad && !bad.ok) return { ok: false, message: `The chain links, but ${bad.problem}.` };
    const from = sealed ? ` from the last sealed head (seq ${sealed.seq}, sealed ${sealed.sealedAt}; what is before it is in the archive)` : "";
    return { ok: true, message: `Intact${from}: all ${verdict.count.toLocaleString()} ${sealed ? "live " : ""}records link${verdict.chains ? `, in ${verdict.chains.length} chains` : `, up to seq ${verdict.lastSeq}`}; ${checkpoints.length} checkpoint${checkpoints.length === 1 ? " matches" : "s match"}.` };
  }
}
