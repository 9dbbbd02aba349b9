/**
 * The `route` label of reconcile_http_request_seconds: the route's template
 * (`/api/v1/operations/[operationId]`), never the path a client sent, so that the number of
 * series stays bounded whatever paths arrive. Templates come from Next.js's build
 * (`.next/app-path-routes-manifest.json`), read once when the server starts.
 */
export type RouteMatcher = (pathname: string) => string;

type Compiled = { template: string; re: RegExp; statics: number };

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A matcher over these templates: the most specific that matches (most static segments), `other` when none, `static` for Next's assets. */
export function routeMatcher(templates: string[]): RouteMatcher {
  const compiled: Compiled[] = [];
  for (const template of new Set(templates)) {
    if (template.startsWith("/_")) continue; // Next's own (/_not-found, /_global-error)
    const parts = template.split("/").filter(Boolean);
    let statics = 0;
    const re = parts
      .map((p) => {
        if (/^\[\.\.\.[^\]]+\]$/.test(p)) return "(?:/.+)";
        if (/^\[\[\.\.\.[^\]]+\]\]$/.test(p)) return "(?:/.*)?";
        if (/^\[[^\]]+\]$/.test(p)) return "/[^/]+";
        statics++;
        return "/" + escape(p);
      })
      .join("");
    compiled.push({ template, re: new RegExp(`^${re || "/"}/?$`), statics });
  }
  // Static segments first (`/api/v1/receipts` before `/api/v1/[...path]`), then longer templates.
  compiled.sort((a, b) => b.statics - a.statics || b.template.length - a.template.length);
  return (pathname) => {
    if (pathname.startsWith("/_next/")) return "static";
    for (const c of compiled) if (c.re.test(pathname)) return c.template;
    return "other";
  };
}

/** Templates from a manifest's values (`{"/api/health/route": "/api/health", …}`). */
export function templatesOf(manifest: unknown): string[] {
  if (!manifest || typeof manifest !== "object") return [];
  return Object.values(manifest as Record<string, unknown>).filter((v): v is string => typeof v === "string");
}
