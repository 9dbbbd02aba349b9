import { json } from "@/lib/api/route";
import { readiness } from "@/lib/observability/health";

export const dynamic = "force-dynamic";

/** Readiness: 200 when the database answers, its migrations are applied and the job worker runs; else 503, saying which. */
export async function GET() {
  const r = await readiness();
  return json({ status: r.ready ? "ok" : "unavailable", checks: r.checks }, r.ready ? 200 : 503);
}
