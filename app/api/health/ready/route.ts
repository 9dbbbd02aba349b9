import { json } from "@/lib/api/route";
import { inInstance } from "@/lib/store/db/project-context";
import { readiness } from "@/lib/observability/health";

export const dynamic = "force-dynamic";

/** Readiness: 200 when the database answers, its migrations are applied and the job worker runs; else 503, saying which. */
export async function GET() {
  // The instance's database and the default project's worker (every project's database is the same server's).
  const r = await inInstance(() => readiness());
  return json({ status: r.ready ? "ok" : "unavailable", checks: r.checks }, r.ready ? 200 : 503);
}
