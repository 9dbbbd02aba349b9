/** Demo accounts `npm run demo` creates and prints: local demo only, never for real data. */
export const DEMO_USERS = [
  { email: "admin@reconcile.test", password: "reconcile-demo-admin", role: "admin" },
  { email: "reviewer@reconcile.test", password: "reconcile-demo-reviewer", role: "reviewer" },
  { email: "viewer@reconcile.test", password: "reconcile-demo-viewer", role: "viewer" },
] as const;
