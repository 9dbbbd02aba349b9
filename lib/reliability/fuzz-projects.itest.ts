/**
 * Fuzz family for projects (docs/API.md "Projects"):
 * - across projects: every route that names an operation, a trajectory, a verifier, a webhook,
 *   a secret or a project's members is tried with ids from another project (and, through
 *   `/p/{slug}/api/…`, with another project's path): the answer is 404 or the asker's own data,
 *   never the other project's, and never a 403 that would tell the other's things exist;
 * - GET /api/v1/security-events (the instance's trail) with random and hostile queries and methods;
 * - POST /api/v1/projects, PATCH /api/v1/projects/{slug} and the members routes with random and hostile bodies (huge arrays,
 *   100,000 keys, deep nesting): never a 5xx, and a refusal writes nothing (no project, no
 *   member, no chain record).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";

type Side = { slug: string; token: string; ops: string[]; trajectory: string; marker: string };
let a: Side;
let b: Side;
let instanceAdmin: string;

const MARKER = () => `mark-${unique("m")}`;

async function side(slug: string, token: string): Promise<Side> {
  const marker = MARKER();
  const trajectory = unique("traj");
  const ops: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = unique("op-x");
    const r = await ingest(token, {
      operation_id: id,
      tool: marker,
      trajectory_id: trajectory,
      intent: { target: marker, effect: "once" },
      receipt: { status: "accepted", observed_at: "2026-11-02T10:00:00Z" },
    });
    expect(r.status, r.text).toBe(201);
    ops.push(id);
  }
  return { slug, token, ops, trajectory, marker };
}

beforeAll(async () => {
  const admin = await principal("admin", ["ingest", "verify", "read", "export", "review", "admin"]);
  instanceAdmin = admin.token;
  const slug = unique("fz").toLowerCase();
  const made = await call("/api/v1/projects", { token: admin.token, body: { slug } });
  expect(made.status, made.text).toBe(201);
  const p = await (await import("@/lib/store/people/projects")).projectBySlug(slug);
  const { token: bToken } = await (await import("@/lib/store/people/api-tokens")).createApiToken({
    email: admin.email,
    name: "fuzz-b",
    scopes: ["ingest", "verify", "read", "export", "review", "admin"],
    project: p!.id,
    actor: "itest",
  });
  a = await side("default", admin.token);
  b = await side(slug, bToken);
  // The same id in both projects too: each side must see its own.
  const shared = unique("op-shared");
  for (const s of [a, b]) {
    expect((await ingest(s.token, { operation_id: shared, tool: s.marker, receipt: { status: "accepted", observed_at: "2026-11-02T10:00:00Z" } })).status).toBe(201);
    s.ops.push(shared);
  }
}, 120_000);

/** Routes that name something of a project; `id` is an operation id, `name` any other name. */
const routes = (id: string, s: Side) => [
  ["GET", `/api/v1/operations/${encodeURIComponent(id)}`],
  ["GET", `/api/v1/operations/${encodeURIComponent(id)}/stages/1`],
  ["GET", `/api/v1/operations/${encodeURIComponent(id)}/claim`],
  ["POST", `/api/v1/operations/${encodeURIComponent(id)}/claim`],
  ["GET", `/api/v1/operations/${encodeURIComponent(id)}/comments`],
  ["POST", `/api/v1/operations/${encodeURIComponent(id)}/comments`],
  ["POST", `/api/v1/operations/${encodeURIComponent(id)}/corrections`],
  ["GET", `/api/v1/operations/${encodeURIComponent(id)}/approval`],
  ["GET", `/api/v1/trajectories/${encodeURIComponent(s.trajectory)}`],
  ["GET", `/api/v1/operations?q=${encodeURIComponent(s.marker)}`],
  ["GET", `/api/v1/operations?tool=${encodeURIComponent(s.marker)}`],
  ["GET", `/api/v1/audit/export?format=ndjson&operation_id=${encodeURIComponent(id)}`],
  ["GET", `/api/v1/metrics?tool=${encodeURIComponent(s.marker)}`],
  ["GET", `/api/v1/projects/${s.slug}/members`],
  ["POST", `/api/v1/verifiers/any/dry-run`],
] as const;

describe("fuzz: nothing crosses a project", () => {
  it("another project's ids answer 404 or the asker's own data, never the other's", async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.nat(), fc.nat(), fc.boolean(), async (fromA, opPick, routePick, viaPath) => {
        const [me, them] = fromA ? [a, b] : [b, a];
        const id = them.ops[opPick % them.ops.length];
        const list = routes(id, them);
        const [method, path] = list[routePick % list.length];
        // Through the other project's own path (`/p/{slug}/api/…`) too: a token is its project's alone.
        const url = viaPath ? `/p/${them.slug}${path}` : path;
        const body = method === "POST" ? (path.endsWith("/comments") ? { text: "fuzz" } : path.endsWith("/corrections") ? { action: "retract", reason: "fuzz" } : path.endsWith("/dry-run") ? { operation_id: id, definition: {} } : {}) : undefined;
        const before = await chainCount();
        const res = await call(url, { method, token: me.token, ...(body ? { body } : {}) });
        const context = `${fromA ? "A→B" : "B→A"} ${method} ${url} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, context).toBeLessThan(500);
        expect(res.status, context).not.toBe(403);
        if (path.includes("?") && !path.startsWith("/api/v1/audit/")) {
          // A list or a metric echoes the filter it was asked for: what must be absent is the other's operations.
          const items: { operation_id?: string }[] = res.body?.items ?? [];
          expect(items.filter((i) => them.ops.includes(String(i.operation_id)) && !me.ops.includes(String(i.operation_id))), context).toEqual([]);
          if (path.startsWith("/api/v1/metrics") && res.status === 200) expect(res.body.operations, context).toBe(0);
        } else expect(res.text, context).not.toContain(them.marker);
        // An id both projects use is the asker's own operation: that one may answer.
        const shared = me.ops.includes(id);
        if (viaPath || (!shared && /\/operations\/[^?]/.test(path))) expect(res.status, context).toBe(404);
        if (res.status >= 400 && !shared) expect(await chainCount(), context).toBe(before);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150) },
    );
  });
});

const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObject = (n: number) => '{"slug":'.repeat(n) + '"x"' + "}".repeat(n);
const manyKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`;
const hugeArray = (n: number) => `[${Array.from({ length: n }, () => "0").join(",")}]`;

const bodyArb = fc.oneof(
  fc.json().map((raw) => raw),
  fc.record({ slug: fc.string({ maxLength: 50 }), name: fc.option(fc.string({ maxLength: 120 })), retention_days: fc.option(fc.oneof(fc.integer(), fc.double())) }).map((v) => JSON.stringify(v)),
  fc.record({ email: fc.string({ maxLength: 60 }), role: fc.string({ maxLength: 12 }) }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    "",
    "{",
    '{"slug":"a","slug":"b"}',
    '{"__proto__":{"admin":true}}',
    JSON.stringify({ slug: "x".repeat(100_000) }),
    JSON.stringify({ slug: "api" }),
    JSON.stringify({ slug: "default" }),
    JSON.stringify({ email: "nobody@nowhere.example", role: "admin" }),
    JSON.stringify({ email: "x@y.z", role: "owner" }),
    deep(5000),
    deepObject(3000),
    manyKeys(100_000),
    hugeArray(200_000),
  ),
);

describe("fuzz: projects and members", () => {
  it("never answer a 5xx; a refused request creates no project and no member, and adds nothing to the chain", async () => {
    const counts = async () => {
      const d = await db();
      return [await chainCount(), await d.instanceEvent.count(), await d.project.count(), await d.projectMember.count()];
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("/api/v1/projects", "/api/v1/projects/default/members", "/api/v1/projects/default/members/nobody%40x.example"), fc.constantFrom("GET", "POST", "DELETE", "PUT"), bodyArb, async (path, method, raw) => {
        const before = await counts();
        const withBody = method === "POST" || method === "PUT";
        const res = await call(path, { method, token: instanceAdmin, ...(withBody ? { raw } : {}) });
        const context = `${method} ${path} ${raw.slice(0, 80)} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, context).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, context).toEqual(expect.any(String));
          expect(await counts(), context).toEqual(before);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100) },
    );
  });

  it("a project's own settings (PATCH /api/v1/projects/{slug}): never a 5xx; a refusal changes nothing", async () => {
    const project = async () => {
      const d = await db();
      return d.project.findUnique({ where: { slug: b.slug }, select: { name: true, retentionDays: true } });
    };
    const changeArb = fc.oneof(
      bodyArb,
      fc.record({ name: fc.option(fc.string({ maxLength: 220 }), { nil: undefined }), retention_days: fc.option(fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.string()), { nil: undefined }) }).map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(changeArb, async (raw) => {
        const count = [await chainCount(), await (await db()).instanceEvent.count()];
        const before = await project();
        const res = await call(`/api/v1/projects/${b.slug}`, { method: "PATCH", token: b.token, raw });
        const context = `PATCH ${raw.slice(0, 80)} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, context).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, context).toEqual(expect.any(String));
          expect(await project(), context).toEqual(before);
          expect([await chainCount(), await (await db()).instanceEvent.count()], context).toEqual(count);
        } else expect(res.body.name, context).toBe((await project())!.name);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100) },
    );
  });
});

describe("fuzz: the instance's security trail (GET /api/v1/security-events)", () => {
  const queryArb = fc.oneof(
    fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 }), { maxKeys: 5 }).map((d) => new URLSearchParams(d).toString()),
    fc.constantFrom(
      "",
      "format=ndjson",
      "format=csv",
      "format=",
      "format=ndjson&format=ndjson",
      "__proto__=1",
      `format=${"n".repeat(10_000)}`,
      Array.from({ length: 2_000 }, (_, i) => `k${i}=1`).join("&"),
      "%zz=%",
    ),
  );
  it("never a 5xx; a refusal writes nothing; a download adds exactly its own record and is the whole chain", async () => {
    await fc.assert(
      fc.asyncProperty(queryArb, fc.constantFrom("GET", "GET", "POST", "DELETE"), bodyArb, async (query, method, raw) => {
        const before = await (await db()).instanceEvent.count();
        const res = await call(`/api/v1/security-events${query ? `?${query}` : ""}`, { method, token: instanceAdmin, ...(method === "POST" ? { raw } : {}) });
        const context = `${method} ?${query.slice(0, 80)} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, context).toBeLessThan(500);
        const after = await (await db()).instanceEvent.count();
        if (res.status >= 400) {
          expect(after, context).toBe(before);
          return;
        }
        expect(after, context).toBe(before + 1);
        const seqs = res.text.trim().split("\n").map((l) => JSON.parse(l)).filter((l) => "seq" in l).map((l) => l.seq);
        expect(seqs, context).toEqual(seqs.map((_: number, i: number) => i + 1));
        expect(seqs.length, context).toBeGreaterThanOrEqual(before + 1);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 60) },
    );
  });
});
