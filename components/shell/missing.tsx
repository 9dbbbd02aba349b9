"use client";

import Link from "@/components/shell/link";
import { usePathname } from "next/navigation";

/** The id at the end of the current path, as the person typed or followed it. */
function lastSegment(path: string): string {
  const raw = path.split("/").pop() ?? "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * A not-found page that says what was looked for and where to look instead (Next.js's
 * not-found boundaries get no params, so the id comes from the path).
 */
export function Missing({ kind, search }: { kind: "operation" | "trajectory"; search: (id: string) => string }) {
  const id = lastSegment(usePathname());
  return (
    <div className="space-y-3">
      <h1 className="break-all text-2xl font-semibold">
        No {kind} <span className="font-mono">{id}</span>
      </h1>
      <p className="text-slate-700 dark:text-slate-300">
        Nothing with this id has been recorded. Ids match exactly here; the operations list also finds ids by how they start.
      </p>
      <Link href={search(id)} className="inline-block text-indigo-700 underline underline-offset-2 dark:text-indigo-300">
        Search the operations for “{id}”
      </Link>
    </div>
  );
}
