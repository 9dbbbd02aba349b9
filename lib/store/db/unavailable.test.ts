import net from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "./unavailable";
import { DeadlineClient } from "./pg-deadline";

const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A TCP server on a free loopback port that does `onConnection` with each socket. */
async function server(onConnection: (s: net.Socket) => void): Promise<number> {
  const s = net.createServer((socket) => {
    sockets.push(socket);
    onConnection(socket);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return (s.address() as net.AddressInfo).port;
}

async function failure(config: pg.ClientConfig): Promise<unknown> {
  const client = new DeadlineClient(config);
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (e) {
    return e;
  } finally {
    await client.end().catch(() => {});
  }
  throw new Error("expected a failure");
}

describe("isDatabaseUnavailable", () => {
  it("knows the pg driver's real failures: refused, dropped, no answer in time", async () => {
    const closed = await server(() => {});
    await new Promise((r) => servers.pop()!.close(r));
    expect(isDatabaseUnavailable(await failure({ host: "127.0.0.1", port: closed }))).toBe(true);
    const drops = await server((s) => s.destroy());
    expect(isDatabaseUnavailable(await failure({ host: "127.0.0.1", port: drops }))).toBe(true);
    const silent = await server(() => {});
    expect(isDatabaseUnavailable(await failure({ host: "127.0.0.1", port: silent, connectionTimeoutMillis: 100 }))).toBe(true);
  });

  it("knows PostgreSQL's and Prisma's codes for the same, wrapped or not", () => {
    expect(isDatabaseUnavailable({ code: "57014", severity: "ERROR", message: "canceling statement due to statement timeout" })).toBe(true);
    expect(isDatabaseUnavailable({ code: "08006", message: "connection failure" })).toBe(true);
    expect(isDatabaseUnavailable({ code: "P1001", message: "Can't reach database server" })).toBe(true);
    expect(isDatabaseUnavailable({ code: "P2010", meta: { driverAdapterError: { cause: { kind: "ConnectionClosed" } } } })).toBe(true);
    expect(isDatabaseUnavailable(new Error("wrapped", { cause: new Error("Query read timeout") }))).toBe(true);
  });

  it("is false for a bug or a refusal: those are not the database being away", () => {
    expect(isDatabaseUnavailable(new Error("boom"))).toBe(false);
    expect(isDatabaseUnavailable({ code: "23505", severity: "ERROR", message: "duplicate key value violates unique constraint" })).toBe(false);
    expect(isDatabaseUnavailable({ code: "P2002", message: "Unique constraint failed" })).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
    expect(isDatabaseUnavailable("Connection terminated")).toBe(false);
  });
});
