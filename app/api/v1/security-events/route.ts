import { toReadableStream } from "@/lib/api/audit-stream";
import { validated } from "@/lib/api/errors";
import { apiRoute, otherMethods } from "@/lib/api/route";
import { recordTrailExport, securityTrailQuerySchema, securityTrailText } from "@/lib/api/security-trail";
import { releasingWhenDone, startUserJob } from "@/lib/api/user-jobs";
import { sourceAddress } from "@/lib/auth/request";
import { inInstance } from "@/lib/store/db/project-context";

export const dynamic = "force-dynamic";

/** The instance's security trail (sign-in, users, tokens, projects, members), whole, as NDJSON: instance admins (a token: the admin scope). */
export const GET = apiRoute("instance:audit", async ({ req, principal }) => {
  validated(securityTrailQuerySchema, Object.fromEntries(new URL(req.url).searchParams), "query");
  return inInstance(async () => {
    // Started from the UI (a session): one verification or export at a time per user, as the project's export.
    const release = principal.kind === "session" ? await startUserJob(principal.userId, "An export") : async () => {};
    try {
      await recordTrailExport(principal.email, sourceAddress(req.headers));
    } catch (e) {
      await release();
      throw e;
    }
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    return new Response(toReadableStream(releasingWhenDone(securityTrailText(), release)), {
      headers: {
        "content-type": "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="reconcile-security-trail-${stamp}.ndjson"`,
        "cache-control": "no-store",
      },
    });
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
