/**
 * Which requests a person (or a program acting for one) is waiting on, for the server's
 * interactive-first scheduling (lib/store/db/priority.ts): every request but ingest (POST of
 * receipts or OTLP spans: the work that yields) and long polls (`?wait=N`: they sit idle for
 * seconds, and would hold ingest back while nobody waits on the CPU).
 */
export const INGEST_PATHS: ReadonlySet<string> = new Set(["/api/v1/receipts", "/api/v1/otlp/v1/traces"]);

export function isInteractive(method: string | undefined, url: string | undefined): boolean {
  const target = url ?? "/";
  const q = target.indexOf("?");
  const pathname = q === -1 ? target : target.slice(0, q);
  if (method === "POST" && INGEST_PATHS.has(pathname)) return false;
  if (q !== -1) {
    const wait = new URLSearchParams(target.slice(q + 1)).get("wait");
    if (wait !== null && Number(wait) > 0) return false;
  }
  return true;
}
