import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { memberJson, membersOf, readMember } from "@/lib/api/projects";
import { setMember } from "@/lib/store/people/projects";
import { sourceAddress } from "@/lib/auth/request";

type P = { slug: string };

/** The project's members with their roles (and the instance admins, admin in every project). */
export const GET = apiRoute<P>("members:manage", async ({ principal }) => json(await membersOf(principal.project.id)), { projectParam: "slug" });

/** Adds an existing user (by email) with a role, or changes their role. */
export const POST = apiRoute<P>(
  "members:manage",
  async ({ req, principal }) => {
    const m = await readMember(req);
    return json(memberJson(await setMember({ projectId: principal.project.id, email: m.email, role: m.role, actor: principal.email, source: sourceAddress(req.headers) })));
  },
  { projectParam: "slug" },
);

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
