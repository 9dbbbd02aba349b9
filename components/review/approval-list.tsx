"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import Link from "@/components/shell/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition } from "react";
import { Button, Notice } from "@/components/ui/form";
import { MAX_APPROVAL_REASON } from "@/lib/domain/approval";
import { Shortcuts } from "./shortcuts";
import { ArgumentList, SHOWN_KEYS, valueCut } from "@/components/operations/arguments";
import { headline } from "@/lib/domain/headline";

export type HeldRow = {
  operation_id: string;
  tool: string | null;
  agent: string | null;
  owner: string | null;
  rule: string;
  effect: string | null;
  params: Record<string, unknown>;
  requested_at: string;
  expires_at: string;
};

const focusRing = "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600";

/** "4m 12s left", ticking; "expired" once the time is up. */
export function Countdown({ until, now }: { until: string; now: number }) {
  const left = Math.max(0, Math.round((Date.parse(until) - now) / 1000));
  if (left === 0) return <span className="font-medium text-rose-700 dark:text-rose-300">expired</span>;
  const m = Math.floor(left / 60);
  const text = m >= 60 ? `${Math.floor(m / 60)}h ${m % 60}m left` : m ? `${m}m ${left % 60}s left` : `${left}s left`;
  return <span className={`tabular-nums ${left < 60 ? "font-medium text-amber-700 dark:text-amber-300" : ""}`}>{text}</span>;
}

/** The pointers a rule names ("/amount" in "billing.charge: /amount > 100"): those arguments are marked. */
function ruleKeys(rule: string): Set<string> {
  return new Set([...rule.matchAll(/(?:^|\s)\/([^\s/~]+)/g)].map((m) => m[1]));
}

/** The arguments, the ones the rule looks at marked, texts as text and edits as a diff; anything cut short says so, and the whole call is one click away. */
function Arguments({ params, rule }: { params: Record<string, unknown>; rule: string }) {
  const entries = Object.keys(params);
  if (!entries.length) return <p className="text-sm text-slate-600 dark:text-slate-400">No arguments.</p>;
  const whole = JSON.stringify(params, null, 2);
  const cut = entries.length > SHOWN_KEYS || entries.slice(0, SHOWN_KEYS).some((k) => valueCut(params[k]));
  return (
    <div className="space-y-2">
      <ArgumentList params={params} marked={ruleKeys(rule)} />
      {cut ? (
        <p role="note" className="text-sm font-medium text-amber-800 dark:text-amber-300">
          {entries.length > SHOWN_KEYS ? `${entries.length - SHOWN_KEYS} more arguments are not shown above. ` : "Some values are cut short above. "}
          Read all of them before you approve: an approval lets exactly these arguments through.
        </p>
      ) : null}
      <details className="text-sm">
        <summary className="cursor-pointer text-indigo-700 dark:text-indigo-300">all arguments as JSON</summary>
        <pre className="mt-1 max-h-96 overflow-auto rounded bg-slate-50 p-2 text-xs dark:bg-slate-900">{whole.length > 200_000 ? `${whole.slice(0, 200_000)}\n… (open the operation's raw JSON for the rest)` : whole}</pre>
      </details>
    </div>
  );
}

/** One held call: what it would do, what held it, the time left, and approve / deny with a reason. */
export function ApprovalCard({ row, me, canDecide, now, onDone }: { row: HeldRow; me: string; canDecide: boolean; now: number; onDone?: () => void }) {
  const router = useRouter();
  const [, startTransition] = useTransition();
  const [decision, setDecision] = useState<"approve" | "deny" | null>(null);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const own = row.owner !== null && row.owner === me;
  // The page's render time first (the same on the server and in the browser), then the clock.
  const [clock, setClock] = useState(now);
  useEffect(() => {
    const t = setInterval(() => setClock(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const expired = Date.parse(row.expires_at) <= clock;

  function open(d: "approve" | "deny") {
    setDecision(d);
    setError(null);
    setTimeout(() => reasonRef.current?.focus(), 0);
  }
  async function submit(e?: React.FormEvent) {
    e?.preventDefault();
    if (!decision || !reason.trim() || busy) return;
    setBusy(true);
    setError(null);
    const res = await fetch(inCurrentProject(`/api/v1/operations/${encodeURIComponent(row.operation_id)}/approval`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision, reason }),
    }).catch(() => null);
    setBusy(false);
    if (res?.status === 201) {
      setDone(decision === "approve" ? "Approved: the gateway forwards the call now." : "Denied: the caller is told your reason.");
      setDecision(null);
      onDone?.();
      // No refresh here: the decided card would leave the list with the confirmation on it.
      return;
    }
    const body = (await res?.json().catch(() => null)) as { error?: { message?: string } } | null;
    setError(body?.error?.message ?? "Reconcile could not be reached: try again.");
    if (res?.status === 409) startTransition(() => router.refresh());
  }

  return (
    <article data-operation={row.operation_id} tabIndex={-1} className={`space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800 ${focusRing}`} aria-labelledby={`held-${row.operation_id}`}>
      <header className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id={`held-${row.operation_id}`} className="font-semibold">
          <Link className="underline decoration-slate-300 underline-offset-2" href={`/operations/${encodeURIComponent(row.operation_id)}`}>
            {headline({ tool: row.tool, params: row.params }) ?? "a tool"}
          </Link>
          {row.agent ? <span className="font-normal text-slate-600 dark:text-slate-400"> by {row.agent}</span> : null}
        </h2>
        <span className="text-sm">
          <Countdown until={row.expires_at} now={clock} />
        </span>
      </header>
      <p className="text-sm">
        Held by the rule <span className="font-mono">{row.rule}</span>
        {row.effect ? <> · {row.effect}</> : null}
      </p>
      <Arguments params={row.params} rule={row.rule} />
      {done ? <Notice kind="ok">{done}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {!canDecide || done ? null : expired ? (
        <p className="text-sm text-slate-700 dark:text-slate-300">Nobody approved it in time: the call is not sent, and the caller is told so.</p>
      ) : own ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">This call was made with your account: another reviewer must decide it.</p>
      ) : decision ? (
        <form onSubmit={submit} className="space-y-2">
          <label htmlFor={`reason-${row.operation_id}`} className="block text-sm font-medium">
            {decision === "approve" ? "Why may it go out?" : "Why not? (the caller is told)"}
          </label>
          <textarea
            id={`reason-${row.operation_id}`}
            ref={reasonRef}
            required
            maxLength={MAX_APPROVAL_REASON}
            rows={2}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void submit();
              if (e.key === "Escape") setDecision(null);
            }}
            className="w-full rounded-md border border-slate-300 bg-white px-2 py-1 text-sm dark:border-slate-700 dark:bg-slate-900"
          />
          <div className="flex flex-wrap gap-2">
            <Button type="submit" variant={decision === "deny" ? "danger" : "primary"} disabled={!reason.trim() || busy} title={!reason.trim() ? "Say why first" : undefined}>
              {decision === "approve" ? "Approve the call" : "Deny the call"}
            </Button>
            <Button type="button" variant="secondary" onClick={() => setDecision(null)}>
              Cancel
            </Button>
            <span className="self-center text-xs text-slate-600 dark:text-slate-400">Ctrl+Enter confirms · Escape cancels</span>
          </div>
        </form>
      ) : (
        <div className="flex flex-wrap gap-2">
          <Button type="button" onClick={() => open("approve")} data-approve>
            Approve…
          </Button>
          <Button type="button" variant="danger" onClick={() => open("deny")} data-deny>
            Deny…
          </Button>
        </div>
      )}
    </article>
  );
}

/** The Approvals tab: j/k move between held calls, a approves, d denies (each asks for a reason first). */
export function ApprovalList({ rows, me, canDecide, now }: { rows: HeldRow[]; me: string; canDecide: boolean; now: number }) {
  const list = useRef<HTMLDivElement>(null);
  const [current, setCurrent] = useState(0);
  const card = (i: number) => list.current?.querySelectorAll<HTMLElement>("article")[i] ?? null;
  const move = (by: number) => {
    if (!rows.length) return;
    const i = Math.min(rows.length - 1, Math.max(0, current + by));
    setCurrent(i);
    card(i)?.focus();
  };
  const press = (selector: string) => card(current)?.querySelector<HTMLButtonElement>(selector)?.click();
  return (
    <div ref={list} className="space-y-4">
      <Shortcuts
        title="Approvals"
        keys={[
          { key: "j", label: "next held call", run: () => move(1) },
          { key: "k", label: "previous held call", run: () => move(-1) },
          { key: "a", label: "approve the current call (asks why)", run: () => press("[data-approve]"), available: canDecide },
          { key: "d", label: "deny the current call (asks why)", run: () => press("[data-deny]"), available: canDecide },
        ]}
      />
      {rows.map((r, i) => (
        // The card that has focus (clicked, tabbed to, or moved to with j/k) is the one a and d act on.
        <div key={r.operation_id} onFocusCapture={() => setCurrent(i)}>
          <ApprovalCard row={r} me={me} canDecide={canDecide} now={now} />
        </div>
      ))}
    </div>
  );
}
