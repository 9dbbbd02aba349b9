import Link from "next/link";

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

export default function Landing() {
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <p className="text-sm font-semibold uppercase tracking-wide text-indigo-600 dark:text-indigo-400">Reconcile</p>
      <h1 className="mt-2 text-4xl font-bold tracking-tight">A tool receipt is not an outcome.</h1>
      <p className="mt-4 text-lg text-slate-600 dark:text-slate-300">
        Reconcile records every consequential tool call your agents make, reads back what actually happened, and
        blocks unsafe retries until a person has reconciled what the records cannot.
      </p>
      <ol className="mt-10 grid gap-3 sm:grid-cols-5" aria-label="The five stages of an operation">
        {STAGES.map(([name, what], i) => (
          <li key={name} className="rounded-lg border border-slate-200 p-3 dark:border-slate-800">
            <span className="text-xs text-slate-500 dark:text-slate-400">{i + 1}</span>
            <p className="font-medium">{name}</p>
            <p className="text-sm text-slate-600 dark:text-slate-400">{what}</p>
          </li>
        ))}
      </ol>
      <ul className="mt-10 space-y-2" aria-label="Outcomes">
        {OUTCOMES.map(([name, what, cls]) => (
          <li key={name} className="flex items-baseline gap-3">
            <span className={`rounded px-2 py-0.5 text-sm font-medium ${cls}`}>{name}</span>
            <span className="text-slate-700 dark:text-slate-300">{what}</span>
          </li>
        ))}
      </ul>
      <div className="mt-12 flex flex-wrap gap-4">
        <Link href="/login" className="rounded-md bg-indigo-600 px-4 py-2 font-medium text-white hover:bg-indigo-700">
          Sign in
        </Link>
        <a href="/api/health" className="rounded-md px-4 py-2 font-medium text-indigo-700 underline-offset-4 hover:underline dark:text-indigo-300">
          API health
        </a>
      </div>
    </main>
  );
}
