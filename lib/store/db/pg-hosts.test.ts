import { describe, expect, it } from "vitest";
import { parsePgUrl } from "./pg-hosts";

describe("parsePgUrl: libpq's multi-host connection strings", () => {
  it("leaves a one-host URL as it is, any session", () => {
    const u = parsePgUrl("postgresql://dev:dev@127.0.0.1:5432/reconcile");
    expect(u.hosts).toEqual([{ host: "127.0.0.1", port: 5432 }]);
    expect(u.targetSessionAttrs).toBe("any");
    expect(u.connectionString).toBe("postgresql://dev:dev@127.0.0.1:5432/reconcile");
  });

  it("leaves a URL with no host in it (a socket in ?host=) as it is", () => {
    const u = parsePgUrl("postgresql:///reconcile?host=/var/run/postgresql");
    expect(u.hosts).toEqual([]);
    expect(u.connectionString).toBe("postgresql:///reconcile?host=/var/run/postgresql");
  });

  it("reads every host, in order, each with its port or 5432, and the attribute", () => {
    const u = parsePgUrl("postgresql://u:p%40ss@db1:5433,db2,10.0.0.3:6000/app?target_session_attrs=read-write&sslmode=disable");
    expect(u.hosts).toEqual([
      { host: "db1", port: 5433 },
      { host: "db2", port: 5432 },
      { host: "10.0.0.3", port: 6000 },
    ]);
    expect(u.targetSessionAttrs).toBe("read-write");
    // pg's parser sees one host (the first), the password still encoded, the other parameters kept, the attribute (which pg does not know) gone.
    expect(u.connectionString).toBe("postgresql://u:p%40ss@db1:5433/app?sslmode=disable");
  });

  it("takes postgres:// and bracketed IPv6 hosts", () => {
    const u = parsePgUrl("postgres://u@[::1]:5433,[fe80::2]/db?target_session_attrs=primary");
    expect(u.hosts).toEqual([
      { host: "::1", port: 5433 },
      { host: "fe80::2", port: 5432 },
    ]);
    expect(u.targetSessionAttrs).toBe("primary");
    expect(u.connectionString).toBe("postgres://u@[::1]:5433/db");
  });

  it("with one host, read-write is still checked", () => {
    const u = parsePgUrl("postgresql://u@h/db?target_session_attrs=read-write");
    expect(u.hosts).toEqual([{ host: "h", port: 5432 }]);
    expect(u.targetSessionAttrs).toBe("read-write");
    expect(u.connectionString).toBe("postgresql://u@h:5432/db");
  });

  it.each([
    ["postgresql://u@h1:5432,,h2/db", /empty host/],
    ["postgresql://u@h1:54x2,h2/db", /port/],
    ["postgresql://u@h1:0,h2/db", /port/],
    ["postgresql://u@h1:70000,h2/db", /port/],
    ["postgresql://u@h1,h2/db?target_session_attrs=standby", /target_session_attrs/],
    ["postgresql://u@h1,h2/db?target_session_attrs=", /target_session_attrs/],
    ["postgresql://u@[::1,h2/db", /IPv6/],
    ["mysql://u@h/db", /postgresql:\/\//],
  ])("refuses %s with a clear message", (url, message) => {
    expect(() => parsePgUrl(url)).toThrow(message);
  });

  it("never repeats the password in its messages", () => {
    expect(() => parsePgUrl("postgresql://u:secret@h1:bad,h2/db")).toThrow(/^(?!.*secret)/);
  });
});
