import "server-only";
import { createHash } from "node:crypto";
import pg from "pg";
import { wellFormed } from "@/lib/domain/json";
import { envSetting } from "@/lib/domain/settings";
import { ingestPacer } from "./pace";
import { combineWrites, INLINE_MAX_CHARS, inlineValues, MAX_STATEMENT_VALUES, namesTable, valueChars, type Write } from "./pg-statements";
import { deadlineOptions, type DeadlineClient } from "./pg-deadline";
import { pgConnection } from "./pg-failover";
import { checkWrite, type Sql } from "./sql";
import { isDatabaseUnavailable } from "./unavailable";

/**
 * PostgreSQL's ingest connection pool: the `pg` driver itself, for the one path where Prisma's
 * per-query runtime was the cost (as `sqlite-direct.ts` is for SQLite). The SQL is the same
 * (`lib/store/db/sql.ts`); what differs is how rows travel:
 *
 * - An INSERT sends its rows as one JSON array of arrays, unpacked by the server (`INSERT …
 *   SELECT (r->>0)::int8, … FROM jsonb_array_elements($1::jsonb) r`): one parameter and one
 *   statement text per table whatever the number of rows, instead of rows × columns parameters.
 * - Those INSERTs are named prepared statements (the name is a hash of the text), so the server
 *   parses and plans each once per connection. Other statements stay unnamed: their texts vary
 *   with the length of an `IN` list, and a connection keeps every statement it has prepared.
 *
 * Transactions are ordinary BEGIN … COMMIT on one pooled connection; appends still serialise on
 * the chain lock row, as through Prisma.
 */
const INT8 = 20;
const NUMERIC = 1700;

export class DirectPg {
  private readonly pool: pg.Pool;
  /** Each table's column types (`int8`, `text`, …), read once from the catalogue. */
  private readonly columnTypes = new Map<string, Promise<Map<string, string>>>();

  private readonly deadlineMs = envSetting("DATABASE_QUERY_TIMEOUT_MS");

  constructor(url: string, size = envSetting("DATABASE_INGEST_POOL_SIZE")) {
    this.pool = new pg.Pool({
      max: size,
      // Deadlines for a connection and for each answer (pg-deadline.ts): a black-holed network
      // or a stalled database ends the request in a 503 instead of a hang. The server ends a
      // statement after 60 s, and a transaction that sends nothing for 60 s (a stuck caller
      // holding the chain lock). PostgreSQL 15 has no limit on a whole transaction's time.
      ...deadlineOptions(),
      // The URL's first host, and a connection class that tries each of several (pg-failover.ts).
      ...pgConnection(url),
      statement_timeout: 60_000,
      idle_in_transaction_session_timeout: 60_000,
      // Told apart from the Prisma pool in pg_stat_activity.
      application_name: "reconcile-ingest",
      // Counts and sums as numbers, as the shared SQL reads them (Number(...) of a bigint or string works too).
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          oid === INT8 || oid === NUMERIC ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
      },
    });
    // A pooled connection that drops while idle (a server restart) is an error event on the
    // pool: unhandled, it would end the process. The pool replaces it; the next transaction
    // gets a fresh connection.
    this.pool.on("error", (e) => console.error(`reconcile: an idle ingest connection to PostgreSQL failed: ${e.message}`));
  }

  /** Read on the transaction's own connection: another one could be what it waits for (a pool of one, or every connection taken). */
  private types(table: string, client: pg.PoolClient): Promise<Map<string, string>> {
    let t = this.columnTypes.get(table);
    if (!t) {
      t = client
        .query<{ column_name: string; udt_name: string }>("SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1", [table])
        .then((r) => new Map(r.rows.map((c) => [c.column_name, c.udt_name])));
      t.catch(() => this.columnTypes.delete(table));
      this.columnTypes.set(table, t);
    }
    return t;
  }

  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A connection lost while checked out is an error event on it: unhandled, it would end the
    // process. The query in progress fails too, which rolls the transaction back below.
    const lost = (e: Error) => console.error(`reconcile: an ingest connection to PostgreSQL failed: ${e.message}`);
    client.on("error", lost);
    const release = (err?: Error) => {
      client.off("error", lost);
      client.release(err);
    };
    const sql = new PgSql(client, (table) => this.types(table, client));
    // The whole transaction's deadline: a database answering each statement just in time, but
    // slowly (a stall), would hold the request, and the chain lock, far longer. The connection
    // is given up (the database rolls back) and the request answered 503.
    const deadline = setTimeout(() => (client as unknown as DeadlineClient).abandon(), this.deadlineMs);
    try {
      const value = await fn(sql);
      await sql.commit();
      clearTimeout(deadline);
      release();
      return value;
    } catch (e) {
      clearTimeout(deadline);
      // A connection lost or past its deadline is dropped at once: a ROLLBACK would only wait
      // for it again, and the database rolls back a transaction whose connection closes.
      if (isDatabaseUnavailable(e)) {
        release(e instanceof Error ? e : new Error(String(e)));
        throw e;
      }
      // A connection whose ROLLBACK fails is not reused. (ROLLBACK where BEGIN was never sent
      // is a warning, not an error.)
      await client.query("ROLLBACK").then(
        () => release(),
        (err: Error) => release(err),
      );
      throw e;
    }
  }

  /**
   * Reads in one snapshot, on a connection of its own: a read-only REPEATABLE READ transaction,
   * so every statement sees the same committed state (what ingest decides against before it
   * takes the chain lock: ingest-speculation.ts). Its reads never wait for a lock.
   */
  async snapshot<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const lost = (e: Error) => console.error(`reconcile: an ingest connection to PostgreSQL failed: ${e.message}`);
    client.on("error", lost);
    let broken: Error | undefined;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const value = await fn(new SnapshotSql(client));
      await client.query("COMMIT");
      return value;
    } catch (e) {
      if (isDatabaseUnavailable(e)) broken = e instanceof Error ? e : new Error(String(e));
      else await client.query("ROLLBACK").catch((err: Error) => (broken = err));
      throw e;
    } finally {
      client.off("error", lost);
      client.release(broken);
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

const names = new Map<string, string>();
/** A prepared statement's name: a hash of its text (the same text is the same statement on every connection). */
function nameOf(text: string): string {
  let n = names.get(text);
  if (!n) {
    if (names.size >= 1024) names.clear();
    n = `r${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    names.set(text, n);
  }
  return n;
}

/**
 * A transaction's statements, in as few round trips as keep their meaning (pg-statements.ts
 * says why it matters):
 *
 * - BEGIN travels with the first statement when that one has no parameters (the chain lock).
 * - Writes whose result nothing reads (`insert`, `write`) wait, and go together as one
 *   statement: before the next statement that could see them (a read naming one of their
 *   tables, any `run`), before a write to or naming one of their tables, before passing
 *   MAX_STATEMENT_VALUES, or with COMMIT. A read of
 *   other tables goes first, as its answer is the same either way. An error in a write that
 *   waited surfaces at that later statement, inside the same transaction, which then rolls back
 *   whole: nothing here catches a write's error to go on.
 * - The last writes and COMMIT are one message (the simple query protocol, values as untyped
 *   literals) while their values are under INLINE_MAX_CHARS.
 */
class PgSql implements Sql {
  private pending: (Write & { name?: string })[] = [];
  private begun = false;
  /** Round trips so far (its tests count them). */
  roundTrips = 0;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly typesOf: (table: string) => Promise<Map<string, string>>,
  ) {}

  /** One statement, opening the transaction first if nothing has yet. */
  private async send(query: pg.QueryConfig): Promise<pg.QueryResult> {
    if (!this.begun) {
      this.begun = true;
      if (!query.name && !query.values?.length) {
        this.roundTrips++;
        const results = (await this.client.query(`BEGIN; ${query.text}`)) as unknown as pg.QueryResult[];
        return results[results.length - 1];
      }
      this.roundTrips++;
      await this.client.query("BEGIN");
    }
    this.roundTrips++;
    return this.client.query(query);
  }

  private async flush(): Promise<void> {
    if (!this.pending.length) return;
    const writes = this.pending;
    this.pending = [];
    const { text, values } = combineWrites(writes);
    // Named (prepared once per connection) when every part's text is fixed; a combination of
    // fixed texts is one of a few.
    const name = writes.every((w) => w.name) ? nameOf(text) : undefined;
    await this.send({ name, text, values });
  }

  private reads(text: string): boolean {
    return this.pending.some((w) => namesTable(text, w.table));
  }

  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    if (this.reads(sql)) await this.flush();
    return (await this.send({ text: sql, values: params.map(bindable) })).rows as T[];
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.flush();
    await this.send({ text: sql, values: params.map(bindable) });
  }

  async write(table: string, sql: string, params: unknown[] = [], fixed = false): Promise<void> {
    checkWrite(table, sql);
    await this.queue({ table, text: sql, values: params.map(bindable), name: fixed ? nameOf(sql) : undefined });
  }

  /**
   * Holds a write, sending those held first when it could not join them: a second write to one
   * of their tables, a write that names one of their tables (an `UPDATE … FROM` would read it),
   * or more values than one statement may carry.
   */
  private async queue(w: Write & { name?: string }): Promise<void> {
    let values = w.values.length;
    for (const p of this.pending) values += p.values.length;
    if (values > MAX_STATEMENT_VALUES || this.pending.some((p) => p.table === w.table || namesTable(w.text, p.table))) await this.flush();
    this.pending.push(w);
  }

  async insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    if (!rows.length) return;
    const types = await this.typesOf(table);
    const text = insertText(table, columns, types);
    // The rows travel as one JSON array of arrays, which the server unpacks: JSON.stringify is
    // native, where the driver's parameters (or array literals) were each prepared and escaped
    // in JavaScript. Built in slices, so that a 4 MiB batch leaves turns for other requests.
    const pace = ingestPacer({ holdsLock: true });
    const out: unknown[][] = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      if ((r & 1023) === 0) await pace();
      out[r] = rows[r].map(jsonable);
    }
    await this.queue({ table, text, values: [JSON.stringify(out)], name: nameOf(text) });
  }

  /** The writes still waiting, and COMMIT: one message when their values are small (INLINE_MAX_CHARS). */
  async commit(): Promise<void> {
    if (this.pending.length && valueChars(this.pending.flatMap((p) => p.values)) > INLINE_MAX_CHARS) await this.flush();
    if (!this.pending.length) {
      if (!this.begun) return; // nothing was sent: there is nothing to commit
      this.roundTrips++;
      await this.client.query("COMMIT");
      return;
    }
    const { text, values } = combineWrites(this.pending);
    this.pending = [];
    this.roundTrips++;
    await this.client.query(`${this.begun ? "" : "BEGIN; "}${inlineValues(text, values)}; COMMIT`);
    this.begun = true;
  }
}

/** A snapshot's statements: reads only (the transaction is READ ONLY; a write is a mistake here). */
class SnapshotSql implements Sql {
  constructor(private readonly client: pg.PoolClient) {}
  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.client.query({ text: sql, values: params.map(bindable) })).rows as T[];
  }
  run(): Promise<void> {
    throw new Error("a snapshot only reads");
  }
  insert(): Promise<void> {
    throw new Error("a snapshot only reads");
  }
  write(): Promise<void> {
    throw new Error("a snapshot only reads");
  }
}

const insertTexts = new Map<string, string>();
/** `INSERT … SELECT (r->>0)::int8, … FROM jsonb_array_elements($1::jsonb) r`: one text per table and columns. */
function insertText(table: string, columns: string[], types: Map<string, string>): string {
  const key = `${table}(${columns.join(",")})`;
  let text = insertTexts.get(key);
  if (!text) {
    const cells = columns.map((c, i) => {
      const t = types.get(c);
      if (!t) throw new Error(`${table}.${c} is not a column this database has`);
      return `(r->>${i})::${t}`;
    });
    text = `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${cells.join(", ")} FROM jsonb_array_elements($1::jsonb) AS r`;
    insertTexts.set(key, text);
  }
  return text;
}

/**
 * A value as JSON carries it to `->>`: null for undefined, text for big integers and dates.
 * Text is made well-formed: a string cut in the middle of an emoji (a search excerpt, a
 * response excerpt) holds half a surrogate pair, which JSON writes as an escape that jsonb
 * refuses; it is stored as U+FFFD, as the driver's text parameters and SQLite store it.
 */
export function jsonable(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "string") return wellFormed(v);
  if (typeof v === "number" && !Number.isFinite(v)) throw new Error(`a row value for PostgreSQL's ingest must be a finite number, not ${v}`);
  if (typeof v === "bigint") return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === "object") throw new Error("a row value for PostgreSQL's ingest must be a string, number, boolean, date or null");
  return v;
}

/**
 * No undefined: the driver would send it as null anyway, said here. A date as ISO text, as
 * `jsonable` sends it (the driver would send local time), so that a value means the same sent
 * as a parameter or as text with COMMIT.
 */
function bindable(v: unknown): unknown {
  if (v === undefined) return null;
  return v instanceof Date ? v.toISOString() : v;
}
