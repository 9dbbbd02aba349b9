import { exportText, toReadableStream } from "@/lib/api/audit-stream";
import { validated } from "@/lib/api/errors";
import { apiRoute, otherMethods } from "@/lib/api/route";
import { sourceAddress } from "@/lib/auth/request";
import { CONTENT_TYPES } from "@/lib/domain/audit-format";
import { exportQuerySchema, recordExport } from "@/lib/store/chain/audit-export";
import { releasingWhenDone, startUserJob } from "@/lib/api/user-jobs";

export const dynamic = "force-dynamic";

export const GET = apiRoute("audit:export", async ({ req, principal }) => {
  const q = validated(exportQuerySchema, Object.fromEntries(new URL(req.url).searchParams), "query");
  // Exports started from the UI (a session): one at a time per user, held until the stream ends.
  const release = principal.kind === "session" ? await startUserJob(principal.userId, "An export") : async () => {};
  try {
    // The export is recorded before the first byte leaves: no unrecorded export.
    await recordExport(principal.email, q, sourceAddress(req.headers));
  } catch (e) {
    await release();
    throw e;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(toReadableStream(releasingWhenDone(exportText(q), release)), {
    headers: {
      "content-type": CONTENT_TYPES[q.format],
      "content-disposition": `attachment; filename="reconcile-audit-${stamp}.${q.format}"`,
      "cache-control": "no-store",
    },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
