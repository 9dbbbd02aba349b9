import net from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { pgClient, pgConnection } from "./pg-failover";
import { withoutSchema } from "./pg-hosts";
import { DeadlineClient } from "./pg-deadline";
import { isDatabaseUnavailable } from "./unavailable";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

it("leaves one host to pg as it is", () => {
  const c = pgConnection("postgresql://u:p@db:5432/app");
  expect(c.connectionString).toBe("postgresql://u:p@db:5432/app");
  expect(c.Client).toBe(DeadlineClient);
});

it("with several hosts and none reachable, fails as unavailable (08001), naming each host, never the password", async () => {
  const [a, b] = [await closedPort(), await closedPort()];
  const client = pgClient(`postgresql://u:secret@127.0.0.1:${a},127.0.0.1:${b}/app?target_session_attrs=read-write`, { connectionTimeoutMillis: 500 });
  client.on("error", () => {});
  const e = await client.connect().then(
    () => null,
    (err: unknown) => err,
  );
  await client.end().catch(() => {});
  expect(e).toMatchObject({ code: "08001" });
  expect(String((e as Error).message)).toContain(`127.0.0.1:${a}`);
  expect(String((e as Error).message)).toContain(`127.0.0.1:${b}`);
  expect(String((e as Error).message)).not.toContain("secret");
  expect(isDatabaseUnavailable(e)).toBe(true);
});

it("a pool on several hosts answers its connect callback with the same failure", async () => {
  const [a, b] = [await closedPort(), await closedPort()];
  const pool = new pg.Pool({ ...pgConnection(`postgresql://u@127.0.0.1:${a},127.0.0.1:${b}/app`), connectionTimeoutMillis: 1000 });
  const e = await pool.query("SELECT 1").then(
    () => null,
    (err: unknown) => err,
  );
  await pool.end();
  expect(isDatabaseUnavailable(e)).toBe(true);
  expect(String((e as Error).message)).toMatch(/no reachable PostgreSQL host/);
});

it("a write refused on a read-only host (25006) is the database unavailable, answered 503", () => {
  expect(isDatabaseUnavailable({ code: "25006", message: "cannot execute INSERT in a read-only transaction" })).toBe(true);
});

describe("a project's schema in the URL", () => {
  it("is taken out of the URL and kept apart", () => {
    expect(withoutSchema("postgresql://u:p@h:5432/db?schema=project_ab12")).toEqual({ url: "postgresql://u:p@h:5432/db", schema: "project_ab12" });
    expect(withoutSchema("postgresql://u:p@h1,h2/db?target_session_attrs=read-write&schema=project_x")).toEqual({ url: "postgresql://u:p@h1,h2/db?target_session_attrs=read-write", schema: "project_x" });
    expect(withoutSchema("postgresql://u:p@h/db")).toEqual({ url: "postgresql://u:p@h/db", schema: null });
    expect(withoutSchema("postgresql://u:p@h/db?schema=public")).toEqual({ url: "postgresql://u:p@h/db", schema: null });
  });

  it("refuses a name that is not plain", () => {
    expect(() => withoutSchema("postgresql://h/db?schema=x%3Bdrop")).toThrow(/plain/);
    expect(() => withoutSchema("postgresql://h/db?schema=Upper")).toThrow(/plain/);
  });

  it("becomes every connection's search_path", () => {
    expect(pgConnection("postgresql://u:p@h:5432/db?schema=project_ab12")).toMatchObject({ connectionString: "postgresql://u:p@h:5432/db", options: "-c search_path=project_ab12" });
    expect(pgConnection("postgresql://u:p@h:5432/db").options).toBeUndefined();
  });
});
