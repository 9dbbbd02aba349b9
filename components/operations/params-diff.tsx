import { jsonEqual } from "@/lib/domain/hash";

type Obj = Record<string, unknown>;
const show = (v: unknown) => (v === undefined ? "—" : JSON.stringify(v));

/** The parameters the tool actually received, key by key against what the agent built. */
export function ParamsDiff({ intended, passed }: { intended: Obj | null; passed: Obj | null }) {
  if (!passed) return <p className="text-sm text-slate-700 dark:text-slate-300">The receipt does not say which parameters were passed.</p>;
  const keys = [...new Set([...Object.keys(intended ?? {}), ...Object.keys(passed)])].sort();
  const changed = keys.filter((k) => !jsonEqual(intended?.[k], passed[k]));
  return (
    <div>
      <p className="text-sm">
        {!intended
          ? "The intent recorded no parameters to compare with."
          : changed.length
            ? `${changed.length} parameter${changed.length === 1 ? " differs" : "s differ"} from the intent.`
            : "The parameters passed match the intent."}
      </p>
      <table className="mt-2 w-full text-left font-mono text-xs">
        <thead>
          <tr className="text-slate-600 dark:text-slate-400">
            <th className="py-1 pr-3 font-sans font-medium">parameter</th>
            <th className="py-1 pr-3 font-sans font-medium">intended</th>
            <th className="py-1 font-sans font-medium">passed</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => {
            const differs = intended ? changed.includes(k) : false;
            return (
              <tr key={k} className={differs ? "bg-rose-50 dark:bg-rose-950" : ""}>
                <td className="py-1 pr-3 align-top">
                  {k}
                  {differs ? <span className="ml-1 font-sans text-rose-800 dark:text-rose-300">(differs)</span> : null}
                </td>
                <td className="py-1 pr-3 align-top break-all">{intended ? show(intended[k]) : "—"}</td>
                <td className="py-1 align-top break-all">{show(passed[k])}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
