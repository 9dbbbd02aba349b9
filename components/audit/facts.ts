/**
 * The Audit page's label–value lists (chain status, server health): one label column of the
 * same width in each, so their labels line up down the page; on a phone, each label above its value.
 */
export const FACTS_GRID = "grid grid-cols-1 gap-x-4 text-sm sm:grid-cols-[14rem_minmax(0,1fr)] sm:gap-y-1 max-sm:[&>dt:not(:first-child)]:mt-2";
