import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { createProjectFrom, projectsList } from "@/lib/api/projects";
import { sourceAddress } from "@/lib/auth/request";

/** Every project (instance admins). */
export const GET = apiRoute("projects:manage", async () => json(await projectsList()));

/** A new project: 201 once its database is ready (`ready: false` when it is still being made). */
export const POST = apiRoute("projects:manage", async ({ req, principal }) => json(await createProjectFrom(req, principal.email, sourceAddress(req.headers)), 201));

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
