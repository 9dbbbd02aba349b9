/**
 * The load harness (docs/RELIABILITY.md): against the real server, every kind of request at
 * once: ingest (single records and batches of 100), the operations list (page and API), the
 * operation page, corrections and audit exports, for a fixed time at a fixed number of
 * connections. Each connection sends its next request when the last one answered. Reports,
 * per endpoint, requests, p50/p99/max latency, statuses, and failures: any 5xx, any network
 * error, any unexpected status, and any SQLITE_BUSY / pool timeout in the server's log.
 *
 * The writer sweep runs 1, 2, 4, … concurrent writers of one kind alone and reports how
 * throughput and latency change with concurrency, to find a cliff if there is one.
 */
import { divergentRecord, percentile, verifiedRecord } from "./harness";

export type EndpointStats = {
  endpoint: string;
  connections: number;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  failures: number;
  failureSamples: string[];
};

type Worker = {
  endpoint: string;
  connections: number;
  /** One request: returns the status; throws on a network error. `expected` says which statuses are right. */
  make: (conn: number, n: number) => { path: string; init?: RequestInit; expected: number[]; after?: (status: number, body: string) => void };
};

/** `bases`: one or more app instances on the same database; connections are spread over them. */
export type LoadContext = { bases: string[]; token: { ingest: string; review: string; read: string; export: string }; cookie: string };

let unique = 0;
const uid = () => `${process.pid.toString(36)}-${Date.now().toString(36)}-${(++unique).toString(36)}`;

const jsonPost = (token: string, body: unknown): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  body: JSON.stringify(body),
});
const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });

/** Signs in through Auth.js's credentials endpoint; returns the session cookie. */
export async function signIn(base: string, email: string, password: string): Promise<string> {
  const csrfRes = await fetch(`${base}/api/auth/csrf`);
  const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
  const cookies = (r: Response) => r.headers.getSetCookie().map((c) => c.split(";")[0]);
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookies(csrfRes).join("; ") },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${base}/` }),
  });
  const session = cookies(res).find((c) => c.includes("authjs.session-token="));
  if (!session) throw new Error(`sign-in failed: ${res.status} ${res.headers.get("location")}`);
  return session;
}

/** Some operations to read and correct: verified ones, and divergent ones (one per correcting connection). */
export async function seedOperations(ctx: LoadContext, operations: number, divergent: number): Promise<{ ids: string[]; divergent: string[]; trajectories: string[] }> {
  const ids: string[] = [];
  const div: string[] = [];
  const trajectories = new Set<string>();
  const all: object[] = [];
  for (let i = 0; i < operations; i++) {
    const id = `load-seed-${uid()}`;
    const trajectory = `load-traj-${Math.floor(i / 20)}-${unique}`;
    trajectories.add(trajectory);
    const isDivergent = i < divergent;
    all.push(isDivergent ? divergentRecord(id, trajectory) : verifiedRecord(id, trajectory));
    (isDivergent ? div : ids).push(id);
  }
  for (let i = 0; i < all.length; i += 100) {
    const res = await fetch(`${ctx.bases[0]}/api/v1/receipts`, jsonPost(ctx.token.ingest, { records: all.slice(i, i + 100) }));
    if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
  }
  return { ids: [...ids, ...div], divergent: div, trajectories: [...trajectories] };
}

async function drive(bases: string[], workers: Worker[], seconds: number): Promise<EndpointStats[]> {
  const deadline = Date.now() + seconds * 1000;
  const results = await Promise.all(
    workers.map(async (w) => {
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      const samples: string[] = [];
      let failures = 0;
      await Promise.all(
        Array.from({ length: w.connections }, async (_, conn) => {
          const base = bases[conn % bases.length];
          let n = 0;
          while (Date.now() < deadline) {
            const req = w.make(conn, n++);
            const t0 = performance.now();
            let status: number;
            let body = "";
            try {
              const res = await fetch(base + req.path, req.init);
              body = await res.text();
              status = res.status;
            } catch (e) {
              status = 0;
              body = String((e as Error).cause ?? e);
            }
            latencies.push(performance.now() - t0);
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (!req.expected.includes(status)) {
              failures++;
              if (samples.length < 5) samples.push(`${status} ${req.path}: ${body.slice(0, 300)}`);
            }
            req.after?.(status, body);
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      const r = (x: number) => Math.round(x * 10) / 10;
      return {
        endpoint: w.endpoint,
        connections: w.connections,
        requests: latencies.length,
        perSecond: Math.round(latencies.length / seconds),
        p50: r(percentile(latencies, 50)),
        p99: r(percentile(latencies, 99)),
        max: r(latencies[latencies.length - 1] ?? NaN),
        statuses,
        failures,
        failureSamples: samples,
      } satisfies EndpointStats;
    }),
  );
  return results;
}

/** Everything at once: 50 connections split over the endpoints (the split is in the report). */
export async function runMixedLoad(ctx: LoadContext, seconds: number, seeded: { ids: string[]; divergent: string[]; trajectories: string[] }): Promise<EndpointStats[]> {
  const pick = <T>(xs: T[], n: number) => xs[n % xs.length];
  const lastCorrection = new Map<number, string | null>();
  const corrections: Worker = {
    endpoint: "POST corrections",
    connections: 6,
    make: (conn, n) => {
      // Each connection resolves and reopens its own divergent operation, in turn, on fresh state.
      const id = seeded.divergent[conn];
      const body = n % 2 === 0 ? { action: "resolve", outcome: "not_applied", reason: "load test: the post is absent" } : { action: "reopen", reason: "load test: look again" };
      return {
        path: `/api/v1/operations/${id}/corrections`,
        init: jsonPost(ctx.token.review, { ...body, expected_last_correction_id: lastCorrection.get(conn) ?? null }),
        expected: [201],
        after: (status, text) => {
          if (status === 201) lastCorrection.set(conn, (JSON.parse(text) as { correction: { id: string } }).correction.id);
        },
      };
    },
  };
  if (seeded.divergent.length < corrections.connections) throw new Error("seed at least one divergent operation per correcting connection");
  const session = { headers: { cookie: ctx.cookie } };
  const workers: Worker[] = [
    {
      endpoint: "POST receipts (single)",
      connections: 14,
      make: () => ({ path: "/api/v1/receipts", init: jsonPost(ctx.token.ingest, verifiedRecord(`load-${uid()}`, `load-run-${unique >> 6}`)), expected: [201] }),
    },
    {
      endpoint: "POST receipts (batch of 100)",
      connections: 4,
      make: () => ({
        path: "/api/v1/receipts",
        init: jsonPost(ctx.token.ingest, { records: Array.from({ length: 100 }, (_, i) => (i % 10 === 0 ? divergentRecord : verifiedRecord)(`load-${uid()}`, `load-run-${unique >> 6}`)) }),
        expected: [200],
      }),
    },
    {
      endpoint: "GET /api/v1/operations",
      connections: 5,
      make: (_, n) => {
        const filters = ["", "&outcome=divergent", "&needs_review=true", "&tool=crm.update_contact", `&q=${pick(seeded.ids, n)}`];
        return { path: `/api/v1/operations?limit=50${pick(filters, n)}`, init: bearer(ctx.token.read), expected: [200] };
      },
    },
    {
      endpoint: "GET /operations (page)",
      connections: 5,
      make: (_, n) => ({ path: pick(["/p/default/operations", "/p/default/operations?outcome=divergent", "/p/default/operations?needs_review=true"], n), init: session, expected: [200] }),
    },
    {
      endpoint: "GET /operations/{id} (page)",
      connections: 8,
      make: (_, n) => ({ path: `/operations/${pick(seeded.ids, n * 7919)}`, init: session, expected: [200] }),
    },
    {
      endpoint: "GET /api/v1/operations/{id}",
      connections: 4,
      make: (_, n) => ({ path: `/api/v1/operations/${pick(seeded.ids, n * 104729)}`, init: bearer(ctx.token.read), expected: [200] }),
    },
    corrections,
    {
      endpoint: "GET /api/v1/audit/export",
      connections: 4,
      make: (_, n) => {
        const since = new Date(Date.now() - 2000).toISOString();
        const q = [`trajectory_id=${pick(seeded.trajectories, n)}`, `operation_id=${pick(seeded.ids, n)}`, `since=${since}&format=csv`];
        return { path: `/api/v1/audit/export?${pick(q, n)}`, init: bearer(ctx.token.export), expected: [200] };
      },
    },
  ];
  return drive(ctx.bases, workers, seconds);
}

/** N concurrent writers of one kind alone, for each N. */
export async function runWriterSweep(
  ctx: LoadContext,
  kind: "ingest" | "corrections",
  writers: number[],
  seconds: number,
  divergentPool: string[],
): Promise<EndpointStats[]> {
  const out: EndpointStats[] = [];
  let poolAt = 0;
  for (const n of writers) {
    let worker: Worker;
    if (kind === "ingest") {
      worker = {
        endpoint: `ingest x${n}`,
        connections: n,
        make: () => ({ path: "/api/v1/receipts", init: jsonPost(ctx.token.ingest, verifiedRecord(`sweep-${uid()}`, "sweep")), expected: [201] }),
      };
    } else {
      const ops = divergentPool.slice(poolAt, poolAt + n);
      poolAt += n;
      if (ops.length < n) throw new Error(`the sweep needs ${n} more divergent operations`);
      const last = new Map<number, string | null>();
      worker = {
        endpoint: `corrections x${n}`,
        connections: n,
        make: (conn, i) => ({
          path: `/api/v1/operations/${ops[conn]}/corrections`,
          init: jsonPost(ctx.token.review, {
            ...(i % 2 === 0 ? { action: "resolve", outcome: "compensated", reason: "sweep" } : { action: "reopen", reason: "sweep" }),
            expected_last_correction_id: last.get(conn) ?? null,
          }),
          expected: [201],
          after: (status, text) => {
            if (status === 201) last.set(conn, (JSON.parse(text) as { correction: { id: string } }).correction.id);
          },
        }),
      };
    }
    out.push(...(await drive(ctx.bases, [worker], seconds)));
  }
  return out;
}

/** Lines of the server's log that show lock contention reaching the surface. */
export function contentionInLog(log: string): string[] {
  return log.split("\n").filter((l) => /SQLITE_BUSY|database is locked|pool timeout|Timed out fetching a new connection|P2024|P2028/i.test(l));
}

export function formatTable(rows: EndpointStats[]): string {
  const head = "| endpoint | conns | requests | req/s | p50 ms | p99 ms | max ms | statuses | failures |\n|---|--:|--:|--:|--:|--:|--:|---|--:|";
  const lines = rows.map(
    (r) =>
      `| ${r.endpoint} | ${r.connections} | ${r.requests} | ${r.perSecond} | ${r.p50} | ${r.p99} | ${r.max} | ${Object.entries(r.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ")} | ${r.failures} |`,
  );
  return [head, ...lines].join("\n");
}
