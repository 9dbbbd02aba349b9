import pg from "pg";

/** One statement on a connection of its own to the server `url` names (CREATE and DROP DATABASE cannot run in a transaction). */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Drops a test's PostgreSQL database, named `name`, through the server `adminUrl` names, ending
 * the sessions still on it. `WITH (FORCE)` refuses to end a process of no role this one may
 * signal: an autovacuum worker, busy on a database a test has just filled (a CI run, session 13).
 * A plain DROP asks such a worker to stop and waits for it, so that is the second try, after this
 * role's own sessions are ended.
 */
export async function dropTestDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = (sql: string) => adminQuery(adminUrl, sql);
  const code = (e: unknown) => (e as { code?: string }).code;
  for (let attempt = 0; ; attempt++) {
    try {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      return;
    } catch (e) {
      // 42501: a process FORCE may not end; 55006: still in use.
      if ((code(e) !== "42501" && code(e) !== "55006") || attempt >= 20) throw e;
    }
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND usename = current_user AND pid <> pg_backend_pid()`);
    try {
      await admin(`DROP DATABASE IF EXISTS ${name}`);
      return;
    } catch (e) {
      if (code(e) !== "55006") throw e;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** An empty `public` schema in the PostgreSQL database `url` names (a harness's clean start). */
export async function resetPublicSchema(url: string): Promise<void> {
  if (!url?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  await adminQuery(url, "DROP SCHEMA IF EXISTS public CASCADE");
  await adminQuery(url, "CREATE SCHEMA public");
}
