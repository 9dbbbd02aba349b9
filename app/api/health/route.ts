import { json } from "@/lib/api/route";
import { inInstance } from "@/lib/store/db/project-context";
import { checkHealth } from "@/lib/store/db/health";

export const dynamic = "force-dynamic";

export async function GET() {
  const problem = await inInstance(() => checkHealth());
  if (problem) return json({ status: "unavailable", error: { code: "unavailable", message: problem } }, 503);
  return json({ status: "ok" });
}
