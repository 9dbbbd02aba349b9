"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import Link from "@/components/shell/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition } from "react";
import { decideCorrection, MAX_REASON_LENGTH as MAX_REASON, RESOLUTIONS, type CorrectionAction, type EffectiveState, type Resolution } from "@/lib/domain/corrections";
import type { Idempotency } from "@/lib/domain/outcomes";
import { Button, Field, Input, Notice } from "@/components/ui/form";
import { ClaimControls } from "./claim-button";

type Props = {
  operationId: string;
  state: EffectiveState;
  claimed: string | null;
  idempotency: Idempotency;
  lastCorrectionId: string | null;
  /** Who holds the operation in the review queue (null: nobody), and who is looking. */
  holder: string | null;
  me: string;
  admin: boolean;
  /** The next operation in the review queue, offered after a correction (null: none left). */
  nextInQueue?: string | null;
  /** Drawn as an audit sample: its verified outcome may be confirmed (resolve as verified). */
  auditSample?: boolean;
};

const LABEL: Record<CorrectionAction, string> = { resolve: "Resolve", retract: "Retract", reopen: "Reopen" };
const HELP: Record<CorrectionAction, string> = {
  resolve: "Say what actually happened to the effect, after checking the resource that owns it (and, when the agent claimed success, whether that claim was false).",
  retract: "Withdraw a success that was claimed or verified on evidence that does not hold. The operation becomes divergent.",
  reopen: "Undo the latest resolution: the operation returns to the outcome it had before.",
};

/**
 * Reviewer actions on one operation. Each shows what it will do to the outcome and the retry
 * decision before it is confirmed, and names the correction it follows so that a reviewer
 * acting on a state someone else has changed is told, not overruled.
 */
export function CorrectionPanel({ operationId, state, claimed, idempotency, lastCorrectionId, holder: loadedHolder, me, admin, nextInQueue = null, auditSample = false }: Props) {
  const router = useRouter();
  // Opening a form claimed the operation for me (until the page loads again).
  const [claimedHere, setClaimedHere] = useState(false);
  const holder = claimedHere && !loadedHolder ? me : loadedHolder;
  const [open, setOpen] = useState<CorrectionAction | null>(null);
  // No resolution is chosen for the reviewer: a correction is permanent, so the choice is theirs.
  const [outcome, setOutcome] = useState<Resolution | null>(null);
  // With a resolve: record the agent's success claim as false (offered while the claim stands).
  const [withdraw, setWithdraw] = useState(false);
  const claimStands = claimed === "success" && !state.claim_withdrawn;
  const [reason, setReason] = useState("");
  const [evidence, setEvidence] = useState({ object_id: "", url: "", fingerprint: "" });
  const [error, setError] = useState<string | null>(null);
  const [conflict, setConflict] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  const [done, setDone] = useState<string | null>(null);
  // After a correction the form is gone: focus goes to what was recorded and the way on, not to the page's top.
  const doneRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (done) doneRef.current?.focus();
  }, [done]);

  const allowed = (["resolve", "retract", "reopen"] as const).filter((a) =>
    a === "resolve" ? RESOLUTIONS.some((o) => decideCorrection({ action: a, outcome: o, evidence: { object_id: "x" } }, state, claimed, idempotency, { auditSample }).ok) : decideCorrection({ action: a }, state, claimed, idempotency, { auditSample }).ok,
  );
  const request = open && (open !== "resolve" || outcome) ? { action: open, ...(open === "resolve" ? { outcome: outcome!, evidence, ...(withdraw ? { withdraw_claim: true } : {}) } : {}) } : null;
  const preview = request ? decideCorrection(request, state, claimed, idempotency, { auditSample }) : null;
  // Why Confirm is not available yet, said beside it (a refusal of the correction itself is said above it).
  const missing = open === "resolve" && !outcome ? "Choose what happened first." : preview && !preview.ok ? "This correction cannot be made (above)." : !reason.trim() ? "Write a reason first." : null;

  /**
   * Opens (or closes) a correction form. Opening one on an unclaimed operation claims it, so the
   * queue shows who is on it; a claim someone else made meanwhile is said, and the form stays shut.
   */
  async function toggle(a: CorrectionAction) {
    const opening = open !== a;
    setOpen(opening ? a : null);
    setOutcome(null);
    setWithdraw(false);
    setError(null);
    setConflict(null);
    setDone(null);
    if (!opening || holder) return;
    const res = await fetch(inCurrentProject(`/api/v1/operations/${encodeURIComponent(operationId)}/claim`), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    if (res.ok) {
      // Said here at once; the rest of the page stays as loaded until the correction is sent.
      setClaimedHere(true);
      return;
    }
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: { holder?: string } } } | null;
    setOpen(null);
    if (body?.error?.code === "claimed_by_other") {
      setConflict(`${body.error.details?.holder ?? "Another reviewer"} claimed this operation while you were looking: take it over (they will see that you did) before you correct it.`);
      startTransition(() => router.refresh());
    } else setConflict(`Could not claim this operation: ${body?.error?.message ?? `the server answered ${res.status}`}.`);
  }

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    if (!open) return;
    setError(null);
    const ev = Object.fromEntries(Object.entries(evidence).filter(([, v]) => v.trim()));
    const res = await fetch(inCurrentProject(`/api/v1/operations/${encodeURIComponent(operationId)}/corrections`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        action: open,
        ...(open === "resolve" ? { outcome, ...(withdraw ? { withdraw_claim: true } : {}) } : {}),
        reason,
        ...(Object.keys(ev).length ? { evidence: ev } : {}),
        expected_last_correction_id: lastCorrectionId,
      }),
    });
    if (res.status === 201) {
      setClaimedHere(false);
      setDone(LABEL[open]);
      setOpen(null);
      setReason("");
      startTransition(() => router.refresh());
      return;
    }
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: { holder?: string; last_correction?: { action: string; outcome: string | null; reviewer: string; reason: string } | null; effective_outcome?: string } } } | null;
    if (body?.error?.code === "claimed_by_other") {
      setConflict(`${body.error.details?.holder ?? "Another reviewer"} claimed this operation while you were looking: take it over (they will see that you did) before you correct it.`);
      // Whatever this page claimed is the server's to say now (the refresh brings who holds it).
      setClaimedHere(false);
      setOpen(null);
      startTransition(() => router.refresh());
      return;
    }
    if (res.status === 409) {
      setClaimedHere(false);
      const last = body?.error?.details?.last_correction;
      setConflict(
        last
          ? `While you were looking, ${last.reviewer} made a correction (${last.action}${last.outcome ? ` as ${last.outcome.replace("_", " ")}` : ""}: “${last.reason}”). The operation is now ${body?.error?.details?.effective_outcome?.replace("_", " ")}. The page below shows the current state: act on it if you still need to.`
          : "Someone else acted on this operation while you were looking. The page below shows the current state.",
      );
      setOpen(null);
      startTransition(() => router.refresh());
      return;
    }
    setError(body?.error?.message ?? `the server answered ${res.status}`);
  }

  return (
    <section aria-labelledby="review-actions" className="rounded-xl border border-indigo-200 bg-indigo-50/50 p-4 dark:border-indigo-900 dark:bg-indigo-950/30">
      <h2 id="review-actions" className="font-semibold">
        Review
      </h2>
      {conflict ? (
        <div className="mt-2">
          <Notice kind="error">{conflict}</Notice>
        </div>
      ) : null}
      {done ? (
        <div ref={doneRef} tabIndex={-1} role="status" className="mt-2 outline-none flex flex-wrap items-center gap-3 rounded-md border border-emerald-300 bg-emerald-50 px-3 py-2 text-sm text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200">
          <span>{done} recorded.</span>
          {nextInQueue ? (
            <Link href={`/operations/${encodeURIComponent(nextInQueue)}`} aria-keyshortcuts="j" className="rounded-sm font-medium underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600">
              Next in the review queue: {nextInQueue} (j) →
            </Link>
          ) : (
            <Link href="/review" className="rounded-sm font-medium underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600">
              The queue has nothing after this one: back to Review
            </Link>
          )}
        </div>
      ) : null}
      <div className="mt-2 flex flex-wrap items-center gap-3">
        <p role="note" className="text-sm text-slate-800 dark:text-slate-200">
          {holder && holder !== me ? (
            <>
              <strong>{holder}</strong> is working on this operation: only they can correct it until you take it over (taking over is recorded and names them).
            </>
          ) : holder ? (
            "You are working on this operation."
          ) : (
            "Nobody has claimed this operation."
          )}
        </p>
        <ClaimControls id={operationId} holder={holder} me={me} admin={admin} />
      </div>
      {allowed.length === 0 ? (
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">Nothing to reconcile here: no correction applies to a {state.outcome.replace("_", " ")} operation.</p>
      ) : (
        <div className="mt-2 flex flex-wrap gap-2">
          {allowed.map((a) => (
            <Button key={a} type="button" variant={open === a ? "primary" : "secondary"} aria-expanded={open === a} disabled={Boolean(holder && holder !== me)} onClick={() => toggle(a)}>
              {LABEL[a]}
            </Button>
          ))}
        </div>
      )}
      {open ? (
        <form onSubmit={submit} className="mt-4 space-y-3" aria-label={`${LABEL[open]} this operation`}>
          <p className="text-sm text-slate-700 dark:text-slate-300">{HELP[open]}</p>
          {open === "resolve" ? (
            <fieldset>
              <legend className="text-sm font-medium">Resolve as (choose what you found)</legend>
              <div className="mt-1 flex flex-wrap gap-4 text-sm">
                {RESOLUTIONS.map((o) => (
                  <label key={o} className="flex items-center gap-2">
                    <input
                      type="radio"
                      name="outcome"
                      value={o}
                      required
                      checked={outcome === o}
                      onChange={() => {
                        setOutcome(o);
                        // The effect is absent or undone: the agent's "success" was false, unless the reviewer says otherwise.
                        setWithdraw(claimStands && o !== "verified");
                      }}
                    />
                    {o === "verified" ? "verified — the effect is there" : o === "not_applied" ? "not applied — the effect is absent" : "compensated — the effect was undone"}
                  </label>
                ))}
              </div>
            </fieldset>
          ) : null}
          {open === "resolve" && claimStands ? (
            <label className="flex items-start gap-2 text-sm">
              <input type="checkbox" className="mt-1" checked={withdraw} disabled={outcome === "verified"} onChange={(e) => setWithdraw(e.target.checked)} aria-describedby="withdraw-help" />
              <span>
                The agent told its user this succeeded: record that claim as false
                <span id="withdraw-help" className="block text-slate-600 dark:text-slate-400">
                  {outcome === "verified" ? "Resolved as verified, the claim was true." : "It stays counted as an overclaimed success after this resolve; a reopen undoes both."}
                </span>
              </span>
            </label>
          ) : null}
          <Field label="Reason" htmlFor="correction-reason" hint={`Required. Say what you checked and what you saw. ${reason.length.toLocaleString("en")} of ${MAX_REASON.toLocaleString("en")} characters; Ctrl+Enter confirms.`}>
            <textarea
              id="correction-reason"
              required
              maxLength={MAX_REASON}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              onKeyDown={(e) => {
                // As the note form: Ctrl+Enter (⌘+Enter) sends, when Confirm could.
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                  e.preventDefault();
                  if (!missing && !pending) e.currentTarget.form?.requestSubmit();
                }
              }}
              rows={3}
              className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm dark:border-slate-700 dark:bg-slate-900"
            />
          </Field>
          {open === "resolve" ? (
            <div className="grid gap-3 sm:grid-cols-3">
              {(["object_id", "url", "fingerprint"] as const).map((k) => (
                <Field key={k} label={`Evidence: ${k.replace("_", " ")}`} htmlFor={`ev-${k}`}>
                  <Input
                    id={`ev-${k}`}
                    type={k === "url" ? "url" : "text"}
                    placeholder={k === "url" ? "https://…" : undefined}
                    value={evidence[k]}
                    onChange={(e) => setEvidence({ ...evidence, [k]: e.target.value })}
                  />
                </Field>
              ))}
            </div>
          ) : null}
          {preview ? (
            preview.ok ? (
              <p role="status" className="rounded-md border border-slate-300 bg-white px-3 py-2 text-sm dark:border-slate-700 dark:bg-slate-900">
                Outcome: <strong>{preview.outcome_seen.replace("_", " ")}</strong> → <strong>{preview.outcome_after.replace("_", " ")}</strong>. Retry: {preview.retry_after.decision}.
                {preview.state_after.claim_withdrawn && !state.claim_withdrawn ? " The agent's success claim is recorded as false." : ""}
              </p>
            ) : (
              <Notice kind="error">{preview.message.charAt(0).toUpperCase() + preview.message.slice(1)}.</Notice>
            )
          ) : null}
          {error ? <Notice kind="error">{error.charAt(0).toUpperCase() + error.slice(1)}.</Notice> : null}
          <div className="flex flex-wrap items-center gap-2">
            <Button type="submit" disabled={pending || !!missing} aria-describedby={missing ? "confirm-missing" : undefined}>
              Confirm {LABEL[open].toLowerCase()}
            </Button>
            <Button type="button" variant="secondary" onClick={() => setOpen(null)}>
              Cancel
            </Button>
            {missing ? (
              <span id="confirm-missing" className="text-sm text-slate-600 dark:text-slate-400">
                {missing}
              </span>
            ) : null}
          </div>
        </form>
      ) : null}
    </section>
  );
}
