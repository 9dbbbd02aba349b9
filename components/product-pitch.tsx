const STAGES = [
  ["Intent", "what the agent meant to do"],
  ["Receipt", "what the tool said"],
  ["Canonical read", "what the resource shows"],
  ["Side effects", "what else moved"],
  ["Outcome", "what is actually known"],
] as const;

const OUTCOMES = [
  ["verified", "canonical state matches the intended effect", "bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200"],
  ["uncertain", "accepted, but the effect could not be read back", "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200"],
  ["divergent", "the records disagree: absent, conflicting, or partial", "bg-rose-100 text-rose-900 dark:bg-rose-950 dark:text-rose-200"],
  ["rejected", "the write boundary refused it", "bg-slate-200 text-slate-800 dark:bg-slate-800 dark:text-slate-200"],
] as const;

/** The signed-out explanation of the product, beside the sign-in and setup forms. */
export function ProductPitch() {
  return (
    <section aria-labelledby="pitch">
      <p className="text-sm font-semibold uppercase tracking-wide text-indigo-700 dark:text-indigo-300">Reconcile</p>
      <h1 id="pitch" className="mt-2 text-3xl font-bold tracking-tight sm:text-4xl">
        A tool receipt is not an outcome.
      </h1>
      <p className="mt-4 text-slate-700 dark:text-slate-300">
        Reconcile records every consequential tool call your agents make, reads back what actually happened, and blocks unsafe
        retries until a person has reconciled what the records cannot.
      </p>
      <ol className="mt-8 grid gap-2 sm:grid-cols-5" aria-label="The five stages of an operation">
        {STAGES.map(([name, what], i) => (
          <li key={name} className="rounded-lg border border-slate-200 p-3 dark:border-slate-800">
            <span className="text-xs text-slate-600 dark:text-slate-400">{i + 1}</span>
            <p className="font-medium">{name}</p>
            <p className="text-sm text-slate-600 dark:text-slate-400">{what}</p>
          </li>
        ))}
      </ol>
      <ul className="mt-8 space-y-2" aria-label="Outcomes">
        {OUTCOMES.map(([name, what, cls]) => (
          <li key={name} className="flex items-baseline gap-3">
            <span className={`rounded px-2 py-0.5 text-sm font-medium ${cls}`}>{name}</span>
            <span className="text-slate-700 dark:text-slate-300">{what}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
