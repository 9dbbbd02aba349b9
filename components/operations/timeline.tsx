import { displayUtc } from "@/lib/domain/time";
import Link from "@/components/shell/link";
import type { ReactNode } from "react";
import { LongText } from "@/components/ui/text";
import { cellText } from "@/lib/domain/preview";
import type { OperationDetail } from "@/lib/views/operation-detail";
import { categoryName, OutcomeBadge } from "./badges";
import { Differs, SideBySide } from "./compare";
import { ParamsDiff } from "./params-diff";
import { SenderName } from "./verdict-history";
import { RawPayload } from "./raw-payload";
import { VerifierReadFacts } from "./verifier-read";
import { ArgumentList } from "./arguments";
import { resultText } from "@/lib/domain/headline";

/** At most this many reads, and side effects per observation, are listed (the rest: "… N more"). */
const LISTED = 100;

type Stage = OperationDetail["stages"][number];
type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null);
const time = (t: string | null) => (t ? displayUtc(t) : "—");
/** A tool's answer is shown up to this many characters (the rest is in the raw JSON). */
const ANSWER_MAX = 20_000;
const cut = (t: string) => (t.length > ANSWER_MAX ? `${t.slice(0, ANSWER_MAX)}\n… ${(t.length - ANSWER_MAX).toLocaleString("en")} more characters in the raw JSON` : t);

function gap(from: string | null, to: string | null): string | null {
  if (!from || !to) return null;
  const s = Math.round((Date.parse(to) - Date.parse(from)) / 1000);
  if (!Number.isFinite(s)) return null;
  const abs = Math.abs(s);
  const text = abs < 60 ? `${abs} s` : abs < 3600 ? `${Math.round(abs / 60)} min` : abs < 86400 ? `${(abs / 3600).toFixed(1)} h` : `${(abs / 86400).toFixed(1)} days`;
  return s < 0 ? `${text} before the previous stage` : `${text} after the previous stage`;
}

function Facts({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <dl className="grid grid-cols-[minmax(7rem,auto)_1fr] gap-x-4 gap-y-1 text-sm">
      {rows.map(([k, v]) => (
        <div key={k} className="contents">
          <dt className="text-slate-600 dark:text-slate-400">{k}</dt>
          <dd className="min-w-0 break-words">{v ?? "—"}</dd>
        </div>
      ))}
    </dl>
  );
}

function Step({ n, title, status, missing, children, times }: { n: number; title: string; status?: ReactNode; missing?: string; children?: ReactNode; times?: ReactNode }) {
  return (
    <li className="relative pl-10">
      <span aria-hidden className={`absolute left-0 top-1 flex h-7 w-7 items-center justify-center rounded-full text-sm font-semibold ${missing ? "border-2 border-dashed border-slate-400 text-slate-600 dark:text-slate-400" : "bg-indigo-600 text-white"}`}>
        {n}
      </span>
      <section aria-label={`${n}. ${title}`} className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <header className="flex flex-wrap items-baseline justify-between gap-2">
          <h2 className="font-semibold">
            {title} {status}
          </h2>
          {times}
        </header>
        <div className="mt-3">{missing ? <p className="text-sm italic text-slate-700 dark:text-slate-300">{missing}</p> : children}</div>
      </section>
    </li>
  );
}

/** When a stage happened: its own time, or the one its payload names (an OpenTelemetry intent's `observed_at`, the span's start). */
export const observedOf = (stage: Stage): string | null => stage.observed_at ?? str(obj(stage.payload)?.observed_at);

function Times({ stage, previous }: { stage: Stage; previous: string | null }) {
  const observed = observedOf(stage);
  const g = gap(previous, observed);
  return (
    <p className="text-xs text-slate-600 dark:text-slate-400">
      observed {observed ? time(observed) : stage.stage === "intent" ? "— (the intent names no time)" : "—"} · recorded {time(stage.recorded_at)}
      {g ? ` · ${g}` : ""} · sent by <SenderName sentBy={stage.sent_by} />
    </p>
  );
}

function evidenceView(e: unknown): ReactNode {
  if (typeof e === "string") return <LongText value={e} />;
  const o = obj(e);
  if (!o) return "none";
  return (
    <span className="font-mono text-xs">
      {["object_id", "fingerprint", "url"].filter((k) => str(o[k])).map((k) => (
        <span key={k} className="mr-3 inline-block break-all">
          {k}: <LongText value={str(o[k])!} max={80} />
        </span>
      ))}
    </span>
  );
}

/** For an operation that arrived as an OpenTelemetry span: which trace and span, and the span's attributes as sent. */
function OtelSource({ otel }: { otel: Obj | null }) {
  if (!otel) return null;
  return (
    <div className="mt-3 rounded-md bg-slate-50 p-3 text-sm dark:bg-slate-900">
      <Facts
        rows={[
          ["OpenTelemetry", <span key="c">{str(otel.span_name) ?? "span"}{str(otel.convention) ? ` (${str(otel.convention)})` : ""}</span>],
          ["trace id", <span key="t" className="font-mono text-xs break-all">{str(otel.trace_id) ?? "—"}</span>],
          ["span id", <span key="s" className="font-mono text-xs break-all">{str(otel.span_id) ?? "—"}{str(otel.parent_span_id) ? ` (parent ${str(otel.parent_span_id)})` : ""}</span>],
          ["span ran", <span key="r" className="text-xs">{time(str(otel.start))} → {time(str(otel.end))}{obj(otel.status) ? ` · status ${str(obj(otel.status)!.code)}${str(obj(otel.status)!.message) ? `: ${str(obj(otel.status)!.message)}` : ""}` : ""}</span>],
        ]}
      />
      <RawPayload value={otel.attributes ?? {}} label={`span attributes (raw${typeof otel.attributes_dropped === "number" ? `; ${otel.attributes_dropped} more not kept` : ""})`} />
    </div>
  );
}

const RETRY_WORDS = (retry: OperationDetail["retry"]) =>
  `${retry.decision.charAt(0).toUpperCase()}${retry.decision.slice(1)}. Automatic retry: never. ${
    retry.safe_replay_available
      ? "A reviewed replay with the enforced idempotency key is available."
      : "No safe replay: without an enforced idempotency key, another call could create a duplicate effect."
  }`;

export function Timeline({ op }: { op: OperationDetail }) {
  const movedByRead = new Set(op.verdict_history.filter((h) => h.changed_by_later_read).map((h) => h.seq));
  const intent = op.stages.find((s) => s.stage === "intent");
  const receipt = op.stages.find((s) => s.stage === "receipt");
  const reads = op.stages.filter((s) => s.stage === "canonical_read");
  const effects = op.stages.filter((s) => s.stage === "side_effects");
  // The first reads in order, and the deciding one wherever it is.
  const listedReads = reads.filter((r, i) => i < LISTED || r.deciding);
  const ip = obj(intent?.payload);
  const rp = obj(receipt?.payload);
  // Each stage's gap is measured from the stage shown before it.
  const shown = [intent, receipt, ...reads, ...effects].filter((s): s is Stage => Boolean(s));
  // Only observed times are comparable: a recorded time says when we heard, not when it happened.
  const previousTime = new Map(shown.map((s, i) => [s.seq, i ? observedOf(shown[i - 1]) : null]));
  const stamp = (s: Stage | undefined) => (s ? (previousTime.get(s.seq) ?? null) : null);
  const intentPrev = stamp(intent);
  const receiptPrev = stamp(receipt);

  return (
    <ol className="space-y-4" aria-label="The five stages">
      <Step n={1} title="Intent" missing={intent ? undefined : "No intent recorded: what the agent meant to do is unknown."} times={intent ? <Times stage={intent} previous={intentPrev} /> : null}>
        <Facts
          rows={[
            ["tool", <span key="t" className="font-mono">{str(obj(op.tool)?.name) ?? str(op.tool) ?? "—"}</span>],
            ["target", str(ip?.target) ? <LongText value={str(ip?.target)!} /> : "—"],
            ["effect", str(ip?.effect) ? <LongText value={str(ip?.effect)!} /> : "—"],
            ["fingerprint", <span key="f" className="font-mono text-xs break-all">{str(ip?.fingerprint) ?? "—"}</span>],
          ]}
        />
        {obj(ip?.params) ? (
          <div className="mt-3">
            <h3 className="mb-1 text-sm font-medium">Arguments</h3>
            <ArgumentList params={obj(ip?.params)!} />
          </div>
        ) : ip?.params !== undefined ? (
          <RawPayload value={ip.params} label="parameters the agent built" />
        ) : null}
        <OtelSource otel={obj(op.otel)} />
        {intent ? <RawPayload value={intent.payload} download={{ operationId: op.operation_id, seq: intent.seq }} /> : null}
      </Step>

      <Step
        n={2}
        title="Receipt"
        status={rp ? <span className={`ml-2 text-sm font-medium ${rp.status === "accepted" ? "text-slate-800 dark:text-slate-200" : "text-rose-800 dark:text-rose-300"}`}>{String(rp.status)}</span> : null}
        missing={receipt ? undefined : "No receipt recorded: nothing says the write boundary saw this call."}
        times={receipt ? <Times stage={receipt} previous={receiptPrev} /> : null}
      >
        <Facts
          rows={[
            ["receipt id", <span key="r" className="font-mono">{str(rp?.receipt_id) ?? "—"}</span>],
            ["partial", rp?.partial === true ? <strong key="p" className="text-rose-800 dark:text-rose-300">yes: the write executed only partially</strong> : "no"],
            [
              "tool named",
              op.compared.wrong_tool ? (
                <span key="w">
                  <Differs label="wrong tool">{op.compared.wrong_tool.receipt}</Differs>
                  <span className="block text-xs text-slate-700 dark:text-slate-300">
                    The operation is for <span className="font-mono">{op.compared.wrong_tool.operation}</span>: the write boundary ran another tool (failure category 1).
                  </span>
                </span>
              ) : (
                (str(obj(rp?.tool)?.name) ?? str(rp?.tool) ?? "—")
              ),
            ],
            ["environment", obj(rp?.environment) ? <span key="e" className="font-mono text-xs">{cellText(obj(rp?.environment), 400)}</span> : "—"],
          ]}
        />
        {resultText(rp?.raw) !== null ? (
          <div className="mt-3">
            <h3 className="mb-1 text-sm font-medium">What the tool answered</h3>
            <pre tabIndex={0} className="max-h-72 overflow-auto whitespace-pre-wrap break-words rounded-md bg-slate-50 p-2 font-mono text-xs text-slate-900 focus-visible:outline-2 focus-visible:outline-indigo-600 dark:bg-slate-900 dark:text-slate-100">{cut(resultText(rp?.raw)!)}</pre>
          </div>
        ) : obj(rp?.raw) ? (
          <div className="mt-3">
            <h3 className="mb-1 text-sm font-medium">What the tool answered</h3>
            <ArgumentList params={obj(rp?.raw)!} />
          </div>
        ) : null}
        <div className="mt-3">
          <ParamsDiff intended={obj(ip?.params)} passed={obj(rp?.params)} />
        </div>
        {receipt ? <RawPayload value={receipt.payload} download={{ operationId: op.operation_id, seq: receipt.seq }} /> : null}
      </Step>

      <Step n={3} title="Canonical read" missing={reads.length ? undefined : "No canonical read recorded: nobody has read back the resource that owns the effect."}>
        <ul className="space-y-3">
          {listedReads.map((r) => {
            const p = obj(r.payload)!;
            const reader = obj(p.reader);
            const prev = stamp(r);
            return (
              <li
                key={r.seq}
                className={`rounded-lg border p-3 ${r.deciding ? "border-indigo-400 bg-indigo-50 dark:border-indigo-700 dark:bg-indigo-950" : r.stale ? "border-dashed border-slate-300 opacity-80 dark:border-slate-700" : "border-slate-200 dark:border-slate-800"}`}
              >
                <div className="flex flex-wrap items-baseline justify-between gap-2">
                  <p className="font-medium">
                    {String(p.status)}
                    {r.deciding ? <span className="ml-2 rounded bg-indigo-600 px-1.5 py-0.5 text-xs text-white">deciding read</span> : null}
                    {r.stale ? <span className="ml-2 text-xs font-normal text-slate-700 dark:text-slate-300">stale — before the receipt: proves nothing about this write</span> : null}
                    {movedByRead.has(r.seq) ? (
                      <span className="ml-2 rounded bg-amber-100 px-1.5 py-0.5 text-xs font-normal text-amber-950 dark:bg-amber-900 dark:text-amber-100">
                        changed the verdict to verified, sent later by <SenderName sentBy={r.sent_by} />
                      </span>
                    ) : null}
                  </p>
                  <Times stage={r} previous={prev} />
                </div>
                <Facts
                  rows={[
                    ["evidence", evidenceView(p.evidence)],
                    ["reader", reader ? [reader.identity, reader.account && `account ${String(reader.account)}`, reader.region && `region ${String(reader.region)}`, reader.api_version && `API ${String(reader.api_version)}`].filter(Boolean).join(" · ") : "—"],
                  ]}
                />
                {r.deciding && (p.status === "mismatch" || op.compared.fingerprint_differs || op.compared.fingerprint_missing) ? (
                  <SideBySide
                    title={
                      p.status === "mismatch"
                        ? "Mismatch: the canonical state conflicts with the intent"
                        : op.compared.fingerprint_differs
                          ? "The object found is not the one intended: its fingerprint differs"
                          : "The read found the object but did not show its content to compare: no fingerprint"
                    }
                    rows={[
                      { what: "fingerprint", intended: str(ip?.fingerprint), found: str(obj(p.evidence)?.fingerprint) },
                      { what: "target / object", intended: str(ip?.target), found: str(obj(p.evidence)?.object_id) ?? str(p.evidence), compared: false },
                      { what: "effect", intended: str(ip?.effect), found: null, compared: false },
                      ...Object.entries(obj(p.evidence) ?? {})
                        .filter(([k, v]) => !["object_id", "fingerprint", "url"].includes(k) && str(v) !== null)
                        .slice(0, 20)
                        .map(([k, v]) => ({ what: k, intended: str(ip?.[k]) ?? str(obj(ip?.params)?.[k]), found: str(v) })),
                    ]}
                  />
                ) : null}
                <VerifierReadFacts payload={r.payload} sentBy={r.sent_by} />
                <RawPayload value={r.payload} download={{ operationId: op.operation_id, seq: r.seq }} />
              </li>
            );
          })}
        </ul>
        {reads.length > listedReads.length ? <p className="mt-2 text-sm text-slate-700 dark:text-slate-300">… {(reads.length - listedReads.length).toLocaleString("en")} more reads, each in the operation&apos;s JSON (GET /api/v1/operations/{"{id}"}).</p> : null}
      </Step>

      <Step n={4} title="Side effects" missing={effects.length ? undefined : "No side effects recorded."}>
        {effects.map((e) => {
          const prev = stamp(e);
          return (
            <div key={e.seq} className="mb-2">
              <Times stage={e} previous={prev} />
              <ul className="mt-1 space-y-1 text-sm">
                {(Array.isArray(e.payload) ? e.payload.slice(0, LISTED) : []).map((item, i) => {
                  const it = obj(item) ?? {};
                  return (
                    <li key={i} className="flex gap-2">
                      <span className={`w-28 shrink-0 font-medium ${it.status === "observed" ? "text-slate-900 dark:text-white" : "text-slate-600 dark:text-slate-400"}`}>{String(it.status).replace("_", " ")}</span>
                      <LongText value={String(it.name)} />
                    </li>
                  );
                })}
              </ul>
              {Array.isArray(e.payload) && e.payload.length > LISTED ? <p className="text-xs text-slate-600 dark:text-slate-400">… {(e.payload.length - LISTED).toLocaleString("en")} more side effects in this observation</p> : null}
              <RawPayload value={e.payload} download={{ operationId: op.operation_id, seq: e.seq }} />
            </div>
          );
        })}
        {effects.length ? <p className="text-xs text-slate-600 dark:text-slate-400">Side effects are reported, never counted as proof: they cannot upgrade the outcome.</p> : null}
      </Step>

      <Step n={5} title="Outcome" status={<span className="ml-2"><OutcomeBadge outcome={op.effective_outcome} /></span>}>
        <Facts
          rows={[
            ["classified as", <OutcomeBadge key="c" outcome={op.outcome} />],
            ["why", op.reason],
            ["failure category", categoryName(op.failure_category) ?? "none"],
            ["retry", RETRY_WORDS(op.retry)],
            ["agent claimed", op.claimed_outcome ?? "—"],
          ]}
        />
        {op.overclaimed ? (
          <p className="mt-3 rounded-md border border-rose-300 bg-rose-50 px-3 py-2 text-sm text-rose-900 dark:border-rose-800 dark:bg-rose-950 dark:text-rose-200">
            {op.claim_withdrawn
              ? `The agent told its user “${op.claimed_outcome}”, and a reviewer recorded that claim as false: an overclaimed success.`
              : `The agent told its user “${op.claimed_outcome}”, but the records do not verify it: an overclaimed success.`}
          </p>
        ) : null}
      </Step>
    </ol>
  );
}

export function Links({ op }: { op: OperationDetail }) {
  const list = (items: OperationDetail["upstream"], empty: string) =>
    items.length ? (
      <ul className="space-y-1 text-sm">
        {items.map((u) => (
          <li key={u.operation_id} className="flex items-center gap-2">
            <OutcomeBadge outcome={u.effective_outcome} />
            <Link className="font-mono text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300" href={`/operations/${encodeURIComponent(u.operation_id)}`}>
              {u.operation_id}
            </Link>
          </li>
        ))}
      </ul>
    ) : (
      <p className="text-sm text-slate-700 dark:text-slate-300">{empty}</p>
    );
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      <section aria-labelledby="upstream" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="upstream" className="mb-2 font-semibold">Relied on (upstream)</h2>
        {list(op.upstream, "No upstream operations.")}
      </section>
      <section aria-labelledby="downstream" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="downstream" className="mb-2 font-semibold">Relied on by (downstream)</h2>
        {list(op.downstream, "No operation depends on this one.")}
      </section>
    </div>
  );
}
