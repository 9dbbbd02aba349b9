import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { redirect } from "next/navigation";
import { OutcomeBadge } from "@/components/operations/badges";
import { ActiveFilterChips, OperationFilters } from "@/components/operations/filters";
import { NewOperationsNotice } from "@/components/operations/new-notice";
import { renderedAt, When } from "@/components/ui/when";
import { projectPath } from "@/lib/domain/projects";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { describeRefusal } from "@/lib/domain/refusal";
import { correctionActsOf, listOperations, listQuerySchema } from "@/lib/store/queries/list-operations";
import { StatusText } from "@/components/operations/status";
import { Highlighted, MatchLines } from "@/components/operations/highlight";
import { highlightParts, parseSearch } from "@/lib/domain/search";
import { dayOrInstant } from "@/lib/domain/time";
import { knownTools } from "@/lib/store/queries/overview";
import { TableScroll } from "@/components/ui/table-scroll";
import { OperationLead } from "@/components/operations/lead";
import { headlinesOf } from "@/lib/store/queries/headlines";
import { shortId } from "@/lib/domain/headline";

export const metadata: Metadata = { title: "Operations" };

type Search = Record<string, string | string[] | undefined>;
const DATE_PARAMS = ["since", "until", "called_since", "called_until"];

export default async function OperationsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const me = await requirePage("operations:read", "/operations");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const params = await searchParams;
    const raw = Object.fromEntries(Object.entries(params).flatMap(([k, v]) => (typeof v === "string" && v !== "" ? [[k, v]] : [])));
    // The filter form is a plain GET form, so Apply sends its empty fields too (`?tool=&agent=`):
    // answer with the same list at the URL without them, which is the one worth sharing.
    // A date field typed as a plain day means that day's start in UTC: the URL says so in full.
    let dated = false;
    for (const k of DATE_PARAMS) {
      if (raw[k] === undefined) continue;
      const full = dayOrInstant(raw[k]);
      if (full !== raw[k]) [raw[k], dated] = [full, true];
    }
    if (dated || Object.values(params).some((v) => v === "")) {
      const clean = new URLSearchParams(raw);
      redirect(projectPath(me.project.slug, clean.size ? `/operations?${clean}` : "/operations"));
    }
    const parsed = listQuerySchema.safeParse(raw);
    const tools = await knownTools();
    const filters = new URLSearchParams(Object.entries(raw).filter(([k]) => k !== "cursor"));
    const filtered = [...filters.keys()].some((k) => k !== "limit");

    return (
      <div className="space-y-6">
        <h1 className="text-2xl font-semibold">Operations</h1>
        {/* Keyed by the filters: the form's fields start from the URL again after Clear, Back or a link. */}
        <OperationFilters key={filters.toString()} values={raw} tools={tools} />
        <ActiveFilterChips values={raw} />
        {!parsed.success ? (
          <p role="alert" className="rounded-md border border-rose-300 bg-rose-50 px-3 py-2 text-sm text-rose-900 dark:border-rose-800 dark:bg-rose-950 dark:text-rose-200">
            These filters are not valid: {describeRefusal(parsed.error, { input: raw, schema: listQuerySchema, root: "filters", key: "filter" }).message}.
          </p>
        ) : (
          // Called here, not rendered later, so that its reads run in this page's project.
          await Results({ query: parsed.data, filters: filters.toString(), filtered, firstPage: !raw.cursor })
        )}
      </div>
    );
  });
}

async function Results({ query, filters, filtered, firstPage }: { query: Parameters<typeof listOperations>[0]; filters: string; filtered: boolean; firstPage: boolean }) {
  const now = renderedAt();
  const { items, next_cursor, search_capped } = await listOperations(query);
  const acts = await correctionActsOf(items);
  const headlines = await headlinesOf(items);
  if (!items.length) {
    return (
      <div className="rounded-xl border border-dashed border-slate-300 p-8 text-center dark:border-slate-700">
        <p className="font-medium">{filtered ? "No operation matches these filters." : "No operations yet."}</p>
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">
          {filtered ? (
            <>
              Loosen a filter, or <Link className="text-indigo-700 underline dark:text-indigo-300" href="/operations">clear them all</Link>.
            </>
          ) : (
            "Agents send receipts to POST /api/v1/receipts with a token that has the ingest scope."
          )}
        </p>
      </div>
    );
  }
  const next = new URLSearchParams(filters);
  if (next_cursor) next.set("cursor", next_cursor);
  // A search lists the best matches first: pages go on by rank, and there is no "newer" page.
  const ranked = Boolean(query.q) && query.order === "newest";
  const words = query.q ? parseSearch(query.q) : null;
  const hl = (text: string) => <Highlighted parts={highlightParts(text, words)} />;
  const newer = firstPage || ranked || query.order !== "newest" ? null : await newerPage(query, items[0].cursor, filters);
  // What is new since this page loaded: above its first row, or, ranked, above every operation.
  const newest = !firstPage ? null : ranked ? ((await listOperations(listQuerySchema.parse({ limit: "1" }))).items[0]?.cursor ?? null) : (items[0]?.cursor ?? null);
  return (
    <div className="space-y-3">
      {search_capped ? (
        <p role="note" className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100">
          More than 500 operations match this search; only the best 500 are listed. Add a word, or more of the id, to narrow it.
        </p>
      ) : null}
      {firstPage ? <NewOperationsNotice filters={filters} newest={newest} /> : null}
      <TableScroll>
        {/* On a phone (below sm) each row is a card: what happened and its outcome, why, the claim and the age; no sideways scroll. */}
        <table className="w-full text-left text-sm max-sm:block sm:min-w-[44rem]">
          <caption className="sr-only">{ranked ? `Operations matching “${query.q}”, best match first` : "Operations, newest first"}</caption>
          <thead className="max-sm:sr-only">
            <tr className="text-slate-600 dark:text-slate-400">
              <th className="py-2 pr-3 font-medium">Operation</th>
              <th className="py-2 pr-3 font-medium">Outcome</th>
              <th className="py-2 pr-3 font-medium">Why</th>
              <th className="py-2 pr-3 font-medium" title="What the agent told its user">
                Claimed
              </th>
              <th className="py-2 font-medium">Recorded</th>
            </tr>
          </thead>
          <tbody className="max-sm:block">
            {items.map((op) => (
              <tr key={op.operation_id} className="border-t border-slate-200 align-top max-sm:grid max-sm:grid-cols-[minmax(0,1fr)_auto] max-sm:gap-x-3 max-sm:gap-y-1 max-sm:py-3 dark:border-slate-800">
                <td className="py-2 pr-3 max-sm:p-0 sm:max-w-80">
                  <OperationLead id={op.operation_id} headline={headlines.get(op.operation_id) ?? null} render={hl} />
                  {op.trajectory_id ? (
                    <div className="break-all text-xs text-slate-600 dark:text-slate-400" title={op.trajectory_id}>
                      in {words ? hl(op.trajectory_id) : shortId(op.trajectory_id)}
                    </div>
                  ) : null}
                  {op.match ? <MatchLines lines={op.match} /> : null}
                </td>
                <td className="py-2 pr-3 max-sm:p-0 max-sm:text-right">
                  <OutcomeBadge outcome={op.effective_outcome} />
                  {op.needs_review ? <div className="mt-1 text-xs font-medium text-rose-800 dark:text-rose-300">needs review</div> : null}
                </td>
                <td className="py-2 pr-3 text-slate-800 max-sm:col-span-2 max-sm:p-0 dark:text-slate-200">
                  <StatusText op={op} act={acts.get(op.operation_id)} />
                </td>
                <td className="py-2 pr-3 max-sm:p-0 max-sm:text-xs">
                  <span className="text-slate-600 sm:hidden dark:text-slate-400">claimed </span>
                  {op.claimed_outcome ?? "—"}
                </td>
                <td className="py-2 whitespace-nowrap tabular-nums text-slate-700 max-sm:p-0 max-sm:text-right max-sm:text-xs dark:text-slate-300">
                  <When at={op.created_at} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <nav aria-label="Pages" className="flex gap-4 text-sm">
        {!firstPage ? (
          <Link href={`/operations${filters ? `?${filters}` : ""}`} className="text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
            {ranked ? "Best matches" : "Newest"}
          </Link>
        ) : null}
        {newer ? (
          <Link href={newer} className="text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
            ← Newer
          </Link>
        ) : null}
        {next_cursor ? (
          <Link href={`/operations?${next}`} className="text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
            {ranked ? "More matches →" : "Older →"}
          </Link>
        ) : (
          <span className="text-slate-600 dark:text-slate-400">End of the list.</span>
        )}
      </nav>
    </div>
  );
}

/**
 * The page just newer than one that starts at `top` (the list runs newest first, and a cursor
 * means "older than this seq"). It asks for the same filters in the other order from `top`: the
 * `limit` operations just above it, oldest first. If more lie beyond them, the newer page is the
 * one whose cursor sits one seq above the highest of them (so it starts with that operation);
 * if not, the newer page is the first page. Null when nothing is newer.
 */
async function newerPage(query: Parameters<typeof listOperations>[0], top: string, filters: string): Promise<string | null> {
  const above = await listOperations({ ...query, order: "oldest", cursor: Number(top) });
  if (!above.items.length) return null;
  const params = new URLSearchParams(filters);
  if (above.next_cursor) params.set("cursor", String(Number(above.items[above.items.length - 1].cursor) + 1));
  return params.size ? `/operations?${params}` : "/operations";
}
