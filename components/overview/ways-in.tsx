"use client";

import { useSyncExternalStore } from "react";
import Link from "@/components/shell/link";

/** Wrapped, not scrolled: every character is on screen to copy, on a phone too. */
const code = "block whitespace-pre-wrap break-all rounded-md bg-slate-100 p-2 font-mono text-xs text-slate-900 dark:bg-slate-900 dark:text-slate-100";

/**
 * An empty project's overview: the three ways in (docs/INTEGRATIONS.md), each with this
 * server's own URL (as the browser reached it). A token belongs to one project, so a token made
 * on this project's Tokens page is what sends here.
 */
export function WaysIn({ tokensHref }: { tokensHref: string }) {
  // The address the browser used (the server does not know it for sure): a placeholder until hydrated.
  const origin = useSyncExternalStore(
    () => () => undefined,
    () => window.location.origin,
    () => "http://HOST:3000",
  );
  return (
    <section aria-labelledby="ways-in" className="space-y-3 rounded-xl border border-indigo-200 bg-indigo-50/40 p-4 dark:border-indigo-900 dark:bg-indigo-950/30">
      <h2 id="ways-in" className="font-semibold">
        Nothing recorded here yet: three ways to send to this project
      </h2>
      <p className="text-sm text-slate-700 dark:text-slate-300">
        Each needs a token of this project with the <code className="font-mono">ingest</code> scope (and <code className="font-mono">read</code> for the gateway):{" "}
        <Link href={tokensHref} className="text-indigo-700 underline underline-offset-2 dark:text-indigo-300">
          make one on the Tokens page
        </Link>
        . Whatever a token sends lands in its project.
      </p>
      <ol className="space-y-4 text-sm">
        <li className="min-w-0 space-y-1">
          <h3 className="font-medium">1. The API, from your code</h3>
          <code className={code}>{`curl -X POST ${origin}/api/v1/receipts \\
  -H "Authorization: Bearer $TOKEN" \\
  -H "content-type: application/json" \\
  -d '{"operation_id":"op-1","tool":{"name":"write_file"},
       "intent":{"params":{"path":"out/report.md"}},
       "receipt":{"status":"accepted",
         "observed_at":"2026-01-01T12:00:00Z"}}'`}</code>
        </li>
        <li className="min-w-0 space-y-1">
          <h3 className="font-medium">2. OpenTelemetry (OTLP/HTTP traces)</h3>
          <code className={code}>{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${origin}/api/v1/otlp/v1/traces
OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer $TOKEN"`}</code>
          <p className="text-xs text-slate-600 dark:text-slate-400">Tool spans (gen_ai.tool.name, its arguments and result) become operations.</p>
        </li>
        <li className="min-w-0 space-y-1">
          <h3 className="font-medium">3. The MCP gateway, in front of your MCP servers</h3>
          <code className={code}>{`{ "reconcile": { "url": "${origin}", "token_env": "RECONCILE_TOKEN" },
  "upstreams": { "fs": { "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./sandbox"] } } }`}</code>
          <p className="text-xs text-slate-600 dark:text-slate-400">
            Saved as reconcile-gateway.json: <code className="font-mono">RECONCILE_TOKEN=… reconcile-gateway --config reconcile-gateway.json</code>
          </p>
        </li>
      </ol>
      <p className="text-sm text-slate-700 dark:text-slate-300">The repository&apos;s docs/INTEGRATIONS.md says more of each, and which attributes OpenTelemetry spans need.</p>
    </section>
  );
}
