import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { changeProjectFrom, projectDetail } from "@/lib/api/projects";
import { projectById } from "@/lib/store/people/projects";
import { sourceAddress } from "@/lib/auth/request";
import { ApiError } from "@/lib/api/errors";

type P = { slug: string };

/** The project, for any of its members: its name, URL and how long it keeps records. */
export const GET = apiRoute<P>(
  "operations:read",
  async ({ principal }) => {
    const p = await projectById(principal.project.id);
    if (!p) throw new ApiError("not_found", "no such project");
    return json(projectDetail(p));
  },
  { projectParam: "slug" },
);

/** Its admins rename it or set its retention (`retention_days`: null for the instance's default). */
export const PATCH = apiRoute<P>(
  "project:settings",
  async ({ req, principal }) => json(await changeProjectFrom(req, principal.project.id, principal.email, sourceAddress(req.headers))),
  { projectParam: "slug" },
);

export const { POST, PUT, DELETE, OPTIONS } = otherMethods("GET", "PATCH");
