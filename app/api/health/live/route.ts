import { json } from "@/lib/api/route";

export const dynamic = "force-dynamic";

/** Liveness: the process answers. Nothing else is checked (a database outage is readiness's, not a reason to restart). */
export async function GET() {
  return json({ status: "ok" });
}
