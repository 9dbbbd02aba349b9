import { isVerifierSender } from "@/lib/domain/verifier";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null);

/**
 * What a read made by one of Reconcile's own verifiers says about how it was made: the verifier,
 * which check of the window, the request (secrets as {env.NAME}), the HTTP status seen, and the
 * error when there was one. Null for any other read (a payload claiming to be a verifier's is not).
 */
export function VerifierReadFacts({ payload, sentBy }: { payload: unknown; sentBy: { via: string; name?: string } }) {
  const v = obj(obj(payload)?.verifier);
  if (!v || sentBy.via !== "system" || !isVerifierSender(sentBy.name)) return null;
  const request = obj(v.request);
  const headers = obj(request?.headers) ?? {};
  return (
    <div className="mt-2 rounded-md bg-slate-50 p-2 text-sm dark:bg-slate-900" data-testid="verifier-read">
      <p>
        Read by Reconcile itself: verifier <span className="font-mono">{String(v.name)}@{String(v.version)}</span>
        {typeof v.check === "number" ? `, check ${v.check} of ${String(v.of)}` : ""}
        {typeof v.window_closes_at === "string" && v.window_closes_at ? ` (window until ${v.window_closes_at.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC")})` : ""}
      </p>
      <p className="mt-1 font-mono text-xs break-all">
        {String(request?.method ?? "GET")} {String(request?.url ?? "")}
      </p>
      {Object.keys(headers).length ? (
        <p className="font-mono text-xs break-all text-slate-700 dark:text-slate-300">
          {Object.entries(headers)
            .map(([k, val]) => `${k}: ${String(val)}`)
            .join(" · ")}
        </p>
      ) : null}
      <p className="mt-1">
        {v.http_status === null || v.http_status === undefined ? "no answer" : `HTTP ${String(v.http_status)}`}
        {typeof v.rule === "number" ? ` · expect rule ${v.rule + 1}` : ""}
        {typeof v.attempts === "number" && v.attempts > 1 ? ` · after ${v.attempts} attempts` : ""}
        {typeof v.ms === "number" ? ` · ${v.ms} ms` : ""}
      </p>
      {typeof v.error === "string" ? <p className="mt-1 text-rose-800 dark:text-rose-300">{v.error}</p> : null}
    </div>
  );
}
