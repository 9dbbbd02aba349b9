import { cellText, diffParams } from "@/lib/domain/preview";

type Obj = Record<string, unknown>;

/**
 * The parameters the tool actually received, key by key against what the agent built. The diff
 * is linear (lib/domain/preview.ts diffParams) and shows at most 200 rows, differing ones first;
 * each cell is cut to 200 characters. The whole is in the stages' raw JSON downloads.
 */
export function ParamsDiff({ intended, passed }: { intended: Obj | null; passed: Obj | null }) {
  if (!passed) return <p className="text-sm text-slate-700 dark:text-slate-300">The receipt does not say which parameters were passed.</p>;
  const diff = diffParams(intended, passed);
  return (
    <div>
      <p className="text-sm">
        {!intended
          ? "The intent recorded no parameters to compare with."
          : diff.changed
            ? `${diff.changed.toLocaleString("en")} parameter${diff.changed === 1 ? " differs" : "s differ"} from the intent.`
            : "The parameters passed match the intent."}
        {diff.omitted ? ` Showing ${diff.rows.length.toLocaleString("en")} of ${diff.total.toLocaleString("en")} parameters (… ${diff.omitted.toLocaleString("en")} more).` : ""}
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
          {diff.rows.map((r) => (
            <tr key={r.key} className={r.differs ? "bg-rose-50 dark:bg-rose-950" : ""}>
              <td className="py-1 pr-3 align-top break-all">
                {r.key}
                {r.differs ? <span className="ml-1 font-sans text-rose-800 dark:text-rose-300">(differs)</span> : null}
              </td>
              <td className="py-1 pr-3 align-top break-all">{intended ? cellText(r.intended) : "—"}</td>
              <td className="py-1 align-top break-all">{cellText(r.passed)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
