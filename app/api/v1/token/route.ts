import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { projectPath } from "@/lib/domain/projects";

/**
 * Who is asking: the caller's project (with its pages' base path) and, for a token, its name and
 * scopes. The MCP gateway checks its token with it at start, and links its answers to the
 * project's operation pages. Any signed-in caller or token may ask about itself.
 */
export const GET = apiRoute("caller:read", async ({ principal }) => {
  const project = { slug: principal.project.slug, name: principal.project.name, base_path: projectPath(principal.project.slug, "/") };
  if (principal.kind === "session") return json({ kind: "session", email: principal.email, role: principal.role, project });
  return json({ kind: "token", name: principal.tokenName, email: principal.email, role: principal.role, scopes: principal.scopes, project });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
