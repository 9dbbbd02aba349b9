import { describe, expect, it } from "vitest";
import { DEFAULT_PROJECT, effectiveRole, isProjectPage, landingPath, projectDatabaseUrl, projectPath, slugProblem, unprojectedPath } from "./projects";

describe("project slugs", () => {
  it("accepts lower-case letters, digits and single hyphens, 2–40 characters, starting with a letter", () => {
    for (const ok of ["default", "ab", "billing-agents", "team7", "a".repeat(40), "x1-y2-z3"]) expect(slugProblem(ok), ok).toBeNull();
  });

  it("refuses each bad shape with its own sentence", () => {
    expect(slugProblem("")).toMatch(/2 to 40 characters/);
    expect(slugProblem("a")).toMatch(/2 to 40 characters/);
    expect(slugProblem("a".repeat(41))).toMatch(/2 to 40 characters/);
    expect(slugProblem("Billing")).toMatch(/lower-case letters, digits and hyphens/);
    expect(slugProblem("bill ing")).toMatch(/lower-case letters, digits and hyphens/);
    expect(slugProblem("é-team")).toMatch(/lower-case letters, digits and hyphens/);
    expect(slugProblem("7team")).toMatch(/start with a letter/);
    expect(slugProblem("-team")).toMatch(/start with a letter/);
    expect(slugProblem("team-")).toMatch(/end with a letter or digit/);
    expect(slugProblem("te--am")).toMatch(/two hyphens/);
  });

  it("refuses the words the URLs use themselves", () => {
    for (const word of ["api", "login", "setup", "new", "settings", "projects"]) expect(slugProblem(word), word).toMatch(/reserved/);
  });
});

describe("effective role in a project", () => {
  it("is the membership's role", () => {
    expect(effectiveRole({ instanceAdmin: false, membership: "viewer" })).toBe("viewer");
    expect(effectiveRole({ instanceAdmin: false, membership: "reviewer" })).toBe("reviewer");
  });

  it("is none without a membership (the project does not exist for this user)", () => {
    expect(effectiveRole({ instanceAdmin: false, membership: null })).toBeNull();
  });

  it("is admin for an instance admin, member or not", () => {
    expect(effectiveRole({ instanceAdmin: true, membership: null })).toBe("admin");
    expect(effectiveRole({ instanceAdmin: true, membership: "viewer" })).toBe("admin");
  });

  it("ignores a stored role the permission table does not know", () => {
    expect(effectiveRole({ instanceAdmin: false, membership: "owner" })).toBeNull();
  });
});

describe("a project's database", () => {
  it("is the instance's own for the default project", () => {
    expect(projectDatabaseUrl("file:./data/reconcile.db", DEFAULT_PROJECT)).toBe("file:./data/reconcile.db");
    expect(projectDatabaseUrl("postgresql://u:p@h:5432/db", DEFAULT_PROJECT)).toBe("postgresql://u:p@h:5432/db");
  });

  it("is a file beside the instance's on SQLite", () => {
    expect(projectDatabaseUrl("file:./data/reconcile.db", "k3x9")).toBe("file:./data/reconcile.project-k3x9.db");
    expect(projectDatabaseUrl("file:/var/lib/reconcile/main.sqlite", "k3x9")).toBe("file:/var/lib/reconcile/main.project-k3x9.sqlite");
    expect(projectDatabaseUrl("file:data", "k3x9")).toBe("file:data.project-k3x9");
  });

  it("keeps a SQLite URL's query", () => {
    expect(projectDatabaseUrl("file:./data/r.db?connection_limit=1", "k3x9")).toBe("file:./data/r.project-k3x9.db?connection_limit=1");
  });

  it("is a schema of its own in the same PostgreSQL database, other parameters kept", () => {
    expect(projectDatabaseUrl("postgresql://u:p@h:5432/db", "k3x9")).toBe("postgresql://u:p@h:5432/db?schema=project_k3x9");
    expect(projectDatabaseUrl("postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write", "k3x9")).toBe(
      "postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write&schema=project_k3x9",
    );
  });

  it("refuses an id that is not a project id (no path or SQL can ride in it)", () => {
    expect(() => projectDatabaseUrl("file:./data/r.db", "../x")).toThrow(/project id/);
    expect(() => projectDatabaseUrl("postgresql://h/db", "x;drop")).toThrow(/project id/);
  });
});

describe("project paths", () => {
  it("puts a page under its project", () => {
    expect(projectPath("billing", "/operations/op-1")).toBe("/p/billing/operations/op-1");
    expect(projectPath("billing", "/")).toBe("/p/billing");
    expect(projectPath("billing", "/review?x=1")).toBe("/p/billing/review?x=1");
  });

  it("takes a page's path out of its project (null when the path names none)", () => {
    expect(unprojectedPath("/p/billing/operations/op-1")).toEqual({ slug: "billing", path: "/operations/op-1" });
    expect(unprojectedPath("/p/billing")).toEqual({ slug: "billing", path: "/" });
    expect(unprojectedPath("/operations")).toBeNull();
    expect(unprojectedPath("/p/")).toBeNull();
  });
});

describe("which pages are a project's", () => {
  it("the project's data and its settings", () => {
    for (const p of ["/", "/operations", "/operations/op-1", "/review/approvals", "/trajectories/t", "/metrics", "/audit", "/settings/tokens", "/settings/verifiers", "/settings/webhooks", "/settings/members"]) expect(isProjectPage(p), p).toBe(true);
  });

  it("not sign-in, one's account, users, projects, the API or look-alikes", () => {
    for (const p of ["/login", "/setup", "/password", "/forbidden", "/settings/account", "/settings/users", "/settings/projects", "/api/v1/operations", "/operationsx", "/p/default"]) expect(isProjectPage(p), p).toBe(false);
  });
});

describe("where an action sends someone", () => {
  it("puts an old project page's path in the default project, and leaves every other as it is", () => {
    expect(landingPath("/")).toBe("/p/default");
    expect(landingPath("/operations?outcome=divergent")).toBe("/p/default/operations?outcome=divergent");
    expect(landingPath("/p/billing/review")).toBe("/p/billing/review");
    expect(landingPath("/settings/account")).toBe("/settings/account");
    expect(landingPath("/login")).toBe("/login");
  });
});
