/**
 * The request header that names the project a page, server action or session API call is about:
 * set by the proxy (proxy.ts) from a `/p/{slug}/…` path, which it rewrites to the page's own
 * path. A routing fact, not a permission: whoever reads it checks the user's role in that
 * project (a client that sends it itself only chooses among the projects it may open), and a
 * token's project is the token's own whatever it says.
 */
export const PROJECT_HEADER = "x-reconcile-project";
