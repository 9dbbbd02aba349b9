/**
 * First run: /setup makes at most one admin, however many submissions race; a server that others
 * can reach asks for the one-time setup code it printed. Each test starts the real server on a
 * fresh, empty database of the suite's kind (SQLite, or PostgreSQL when the suite runs on it).
 */
import { afterAll, describe, expect, it } from "vitest";
import { startApp, type App } from "@/lib/reliability/harness";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";
import { callAction } from "@/lib/testing/sessions";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function server(db: FreshDatabase, hostname: string): Promise<App> {
  const app = await startApp(db.url, { env: { HOSTNAME: hostname } });
  cleanup.push(() => app.stop());
  return app;
}

async function database(tag: string): Promise<FreshDatabase> {
  const db = await freshDatabase(tag);
  cleanup.push(db.drop);
  return db;
}

const setup = (app: App, fields: Record<string, string>) =>
  callAction("setupAction", { password: "first admin passphrase", confirm: "first admin passphrase", ...fields }, null, "/setup", app.base);

describe("first run", () => {
  it("ten setup submissions at once make exactly one admin (loopback: no setup code)", async () => {
    const db = await database("setup_race");
    const app = await server(db, "127.0.0.1");
    expect(app.output()).not.toMatch(/Setup code/);
    expect(await (await fetch(`${app.base}/setup`)).text()).not.toContain("Setup code");
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => setup(app, { email: `first-${i}@example.test` })));
    // A role is a project's: the first admin is the default project's admin, so the instance's.
    const users = await db.query<{ email: string; role: string }>("SELECT u.email, m.role FROM users u JOIN project_members m ON m.user_id = u.id AND m.project_id = 'default'");
    expect(users).toHaveLength(1);
    expect(users[0].role).toBe("admin");
    const won = answers.filter((a) => a.location === "/p/default" || a.location.endsWith(`${new URL(app.base).host}/p/default`));
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.text.includes("already has an admin"))).toHaveLength(9);
    const created = await db.query<{ payload: string }>("SELECT payload FROM instance_events");
    expect(created.map((r) => JSON.parse(r.payload).type).filter((t) => t === "user.created")).toHaveLength(1);
  });

  it("listening beyond loopback with no user, the server prints a one-time setup code that /setup asks for; instances agree on it", async () => {
    const db = await database("setup_code");
    const [a, b] = await Promise.all([server(db, "0.0.0.0"), server(db, "0.0.0.0")]);
    const code = /Setup code: ([A-Z0-9-]+)/.exec(a.output())?.[1];
    expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(/Setup code: ([A-Z0-9-]+)/.exec(b.output())?.[1]).toBe(code);
    expect(await (await fetch(`${a.base}/setup`)).text()).toContain("Setup code");

    const none = await setup(a, { email: "intruder@example.test" });
    expect(none.text).toContain("The setup code is not right");
    const wrong = await setup(b, { email: "intruder@example.test", code: "AAAA-BBBB-CCCC" });
    expect(wrong.text).toContain("The setup code is not right");
    expect(await db.query("SELECT id FROM users")).toEqual([]);

    // As a person might copy it: lower case, spaces instead of dashes.
    const right = await setup(b, { email: "owner@example.test", code: ` ${code!.toLowerCase().replaceAll("-", " ")} ` });
    expect(right.text).not.toContain("not right");
    expect(await db.query<{ email: string; role: string }>("SELECT u.email, m.role FROM users u JOIN project_members m ON m.user_id = u.id AND m.project_id = 'default'")).toEqual([{ email: "owner@example.test", role: "admin" }]);
    // Used once: gone with the first admin.
    expect(await db.query("SELECT id FROM setup_code")).toEqual([]);
    const late = await setup(a, { email: "late@example.test", code: code! });
    expect(late.text).toContain("already has an admin");
  });
});
