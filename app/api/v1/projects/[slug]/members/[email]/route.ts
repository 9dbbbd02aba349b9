import { apiRoute, otherMethods } from "@/lib/api/route";
import { ApiError } from "@/lib/api/errors";
import { listMembers, removeMember } from "@/lib/store/people/projects";
import { sourceAddress } from "@/lib/auth/request";

type P = { slug: string; email: string };

/** Takes a user out of the project: 204; their tokens for it stop working. */
export const DELETE = apiRoute<P>(
  "members:manage",
  async ({ req, principal, params }) => {
    const email = decodeURIComponent(params.email).trim().toLowerCase();
    const member = (await listMembers(principal.project.id)).find((m) => m.email === email && m.since !== null);
    if (!member) throw new ApiError("not_found", "no such member");
    await removeMember({ projectId: principal.project.id, userId: member.userId, actor: principal.email, source: sourceAddress(req.headers) });
    return new Response(null, { status: 204 });
  },
  { projectParam: "slug" },
);

export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods("DELETE");
