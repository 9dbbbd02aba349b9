/**
 * Verifiers end to end with real HTTP (VERIFIERS.md): the production server on a fresh database
 * of the suite's kind (SQLite, or PostgreSQL with INTEGRATION_DATABASE_URL) performs the reads
 * itself against local services the test starts, through the guarded client, as scheduled jobs.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "@/lib/domain/outcomes";
import { compareInstants } from "@/lib/domain/time";
import { startSocialService, socialVerifier, type SocialService } from "./social-service";
import { api, startVerifierApp, until, type VerifierApp } from "./testing/verifier-app";

const SECRET = "sekrit-read-token-4711";
const INSTANCE_CREDENTIAL = "instance-credential-0815";
let app: VerifierApp;
let social: SocialService;
let counter = 0;

beforeAll(async () => {
  social = await startSocialService();
  app = await startVerifierApp("verifiers", {
    RECONCILE_VERIFIER_ALLOW_HTTP: "1",
    RECONCILE_VERIFIER_ALLOW_PRIVATE: "1",
    SOCIAL_READ_TOKEN: SECRET,
    RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN",
    // An instance credential in the server's environment that no verifier may send.
    AWS_SECRET_ACCESS_KEY: INSTANCE_CREDENTIAL,
  });
});
afterAll(async () => {
  await app?.stop();
  await social?.close();
});

const call = (path: string, body?: unknown, method?: string) => api(app.app.base, app.token, path, body, method);

async function defineVerifier(def: unknown) {
  const r = await call("/api/v1/verifiers", def);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.verifier;
}

/** An operation of `tool` whose receipt names `receiptId`, accepted now. */
async function publish(tool: string, receiptId: string, text = "hello from the agent") {
  const id = `op-${++counter}-${Date.now()}`;
  const r = await call("/api/v1/receipts", {
    operation_id: id,
    tool: { name: tool },
    intent: { effect: "publish one post", params: { text } },
    receipt: { status: "accepted", receipt_id: receiptId, observed_at: new Date().toISOString() },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return id;
}

const operation = async (id: string) => (await call(`/api/v1/operations/${id}`)).body;
const verifierReads = (op: any) => op.stages.filter((s: any) => s.stage === "canonical_read" && s.sent_by.name?.startsWith("verifier:"));

/** A local service answering every request with `answer`; counts what it saw. */
async function service(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: number[] = [];
  const server = http.createServer((req, res) => {
    seen.push(Date.now());
    answer(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return { port, seen, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

describe("eventual consistency: 404 first, then 200", () => {
  it("the operation stays uncertain while the window is open, then verified by Reconcile's own read; never divergent", async () => {
    await defineVerifier(socialVerifier(social.base, { name: "eventual", tool: "social.eventual", checksAt: ["200ms", "1s", "2s"], pendingUntil: "3s" }));
    const post = social.publish("hello from the agent", { visibleAfterMs: 1300 });
    const id = await publish("social.eventual", post.id);

    const windowOpen = await until("the first verifier read", async () => {
      const op = await operation(id);
      return verifierReads(op).length ? op : undefined;
    });
    expect([windowOpen.outcome, windowOpen.reason]).toEqual(["uncertain", REASONS.windowOpen]);
    const first = verifierReads(windowOpen)[0];
    expect(first.payload.status).toBe("absent");
    expect(first.sent_by).toMatchObject({ via: "system", name: "verifier:eventual@1" });
    expect(first.payload.verifier).toMatchObject({ name: "eventual", version: 1, check: 1, of: 4, http_status: 404, rule: 0 });
    expect(first.payload.verifier.request).toEqual({ method: "GET", url: `${social.base}/2/posts/${post.id}`, headers: { Authorization: "Bearer {env.SOCIAL_READ_TOKEN}" } });

    const verified = await until("verified", async () => {
      const op = await operation(id);
      return op.outcome === "verified" ? op : undefined;
    });
    const match = verifierReads(verified).at(-1);
    expect(match.payload).toMatchObject({ status: "match", evidence: { object_id: post.id, fingerprint: expect.stringMatching(/^sha256:/) }, verifier: { http_status: 200, rule: 1, fingerprint_expected: true } });
    expect(verified.verdict_history.map((h: any) => h.outcome)).not.toContain("divergent");
    expect(verified.verdict_history.map((h: any) => h.reason)).toContain(REASONS.windowOpen);

    // The match ended the window: the check at its end reads nothing more.
    await new Promise((r) => setTimeout(r, 3500 - (Date.now() - Date.parse(verified.stages[1].payload.observed_at))));
    await until("every check of the window ended", async () => {
      const rows = await app.db.query<{ status: string }>("SELECT status FROM job WHERE key LIKE $1", [`verifier:eventual@1:${id}:%`]);
      return rows.length === 4 && rows.every((r) => r.status === "done") ? rows : undefined;
    });
    const after = await operation(id);
    expect(after.outcome).toBe("verified");
    expect(verifierReads(after).length).toBe(verifierReads(verified).length);

    // The secret went to the service, and nowhere into the records.
    expect(social.seen.filter((s) => s.path === `/2/posts/${post.id}`).every((s) => s.authorization === `Bearer ${SECRET}`)).toBe(true);
    const leaked = await app.db.query("SELECT seq FROM chain_records WHERE payload LIKE $1", [`%${SECRET}%`]);
    expect(leaked).toEqual([]);
  });
});

describe("never there", () => {
  it("always 404: uncertain inside the window, divergent once the check at its end reads absent", async () => {
    await defineVerifier(socialVerifier(social.base, { name: "never", tool: "social.never", checksAt: ["200ms", "700ms"], pendingUntil: "1500ms" }));
    const id = await publish("social.never", "no-such-post");
    const open = await until("the first read", async () => {
      const op = await operation(id);
      return verifierReads(op).length ? op : undefined;
    });
    expect(open.reason).toBe(REASONS.windowOpen);
    const closed = await until("divergent", async () => {
      const op = await operation(id);
      return op.outcome === "divergent" ? op : undefined;
    });
    expect(closed.reason).toBe(REASONS.absent);
    const reads = verifierReads(closed);
    expect(reads.map((r: any) => r.payload.status)).toEqual(["absent", "absent", "absent"]);
    const last = reads.at(-1).payload;
    expect(last.verifier).toMatchObject({ check: 3, of: 3 });
    expect(compareInstants(last.observed_at, last.verifier.window_closes_at)).toBeGreaterThanOrEqual(0);
    // Before the end it was never divergent: the window held the verdict back.
    const outcomes = closed.verdict_history.map((h: any) => h.outcome);
    expect(outcomes.indexOf("divergent")).toBe(outcomes.length - 1);
    // The list (the projection written when the last read was recorded) says so too.
    const list = await call(`/api/v1/operations?q=${id}`);
    expect(list.body.items[0]).toMatchObject({ operation_id: id, outcome: "divergent" });
  });
});

describe("a verifier's match that shows no fingerprint (issue 54)", () => {
  it("the rule takes one, the answer names the post without it: uncertain, not verified", async () => {
    const svc = await service((req, res) => {
      const id = decodeURIComponent((req.url ?? "").split("/").pop() ?? "");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: { id, text: "hello from the agent" } }));
    });
    try {
      await defineVerifier(socialVerifier(`http://127.0.0.1:${svc.port}`, { name: "no-fingerprint", tool: "social.nofingerprint", checksAt: ["0s"], pendingUntil: "0s" }));
      const id = await publish("social.nofingerprint", "p-1");
      const op = await until("the verifier's read", async () => {
        const o = await operation(id);
        return verifierReads(o).length ? o : undefined;
      });
      expect(verifierReads(op)[0].payload).toMatchObject({ status: "match", evidence: { object_id: "p-1" }, verifier: { rule: 1, fingerprint_expected: true } });
      expect([op.outcome, op.reason, op.needs_review]).toEqual(["uncertain", REASONS.fingerprintMissing, true]);
    } finally {
      await svc.close();
    }
  });
});

describe("failures back off, then record unavailable", () => {
  it("a service answering 500: five attempts with growing waits, then an unavailable read naming the status", async () => {
    const svc = await service((_req, res) => {
      res.writeHead(500).end("boom");
    });
    try {
      await defineVerifier({ ...socialVerifier(`http://127.0.0.1:${svc.port}`, { name: "five-hundred", tool: "social.fivehundred", checksAt: ["0s"], pendingUntil: "0s" }) });
      const id = await publish("social.fivehundred", "p-1");
      const op = await until("the unavailable read", async () => {
        const o = await operation(id);
        return verifierReads(o).length ? o : undefined;
      });
      const read = verifierReads(op)[0].payload;
      expect(read).toMatchObject({ status: "unavailable", verifier: { http_status: 500, rule: null, attempts: 5, error: "no expect rule matched the answer (HTTP 500)" } });
      expect([op.outcome, op.reason]).toEqual(["uncertain", REASONS.readUnavailable]);
      expect(svc.seen.length).toBe(5);
      const gaps = svc.seen.slice(1).map((t, i) => t - svc.seen[i]);
      [100, 200, 400, 800].forEach((min, i) => expect(gaps[i]).toBeGreaterThanOrEqual(min - 20));
    } finally {
      await svc.close();
    }
  });

  it("a slow service: each attempt times out, then an unavailable read saying so", async () => {
    const svc = await service((_req, res) => {
      setTimeout(() => res.writeHead(200).end("{}"), 3000).unref();
    });
    try {
      await defineVerifier(socialVerifier(`http://127.0.0.1:${svc.port}`, { name: "slow", tool: "social.slow", checksAt: ["0s"], pendingUntil: "0s" }));
      const id = await publish("social.slow", "p-2");
      const op = await until("the unavailable read", async () => {
        const o = await operation(id);
        return verifierReads(o).length ? o : undefined;
      });
      const read = verifierReads(op)[0].payload;
      expect(read.status).toBe("unavailable");
      expect(read.verifier).toMatchObject({ http_status: null, attempts: 5 });
      expect(read.verifier.error).toMatch(/^timeout: /);
      expect(svc.seen.length).toBe(5);
    } finally {
      await svc.close();
    }
  });
});

describe("no SSRF", () => {
  it("a redirect to another host is refused: the dry run says so, and the check records unavailable with the refusal", async () => {
    const svc = await service((req, res) => {
      res.writeHead(302, { location: `http://localhost:${(req.socket.localPort ?? 0)}/elsewhere` }).end();
    });
    try {
      const def = { ...socialVerifier(`http://127.0.0.1:${svc.port}`, { name: "redirects", tool: "social.redirects", checksAt: ["0s"], pendingUntil: "0s" }), allow_hosts: ["127.0.0.1", "localhost"] };
      await defineVerifier(def);
      const id = await publish("social.redirects", "p-3");
      const op = await until("the unavailable read", async () => {
        const o = await operation(id);
        return verifierReads(o).length ? o : undefined;
      });
      expect(verifierReads(op)[0].payload).toMatchObject({ status: "unavailable", verifier: { http_status: null } });
      expect(verifierReads(op)[0].payload.verifier.error).toMatch(/^cross_host_redirect: 127\.0\.0\.1:\d+ redirected to another host \(localhost:\d+\)/);
      // Only the first host was ever asked (once per attempt).
      expect(svc.seen.length).toBe(5);
      const before = (await app.db.query<{ n: number }>("SELECT COUNT(*) AS n FROM chain_records"))[0].n;
      const dry = await call("/api/v1/verifiers/redirects/dry-run", { operation_id: id });
      expect(dry.status).toBe(200);
      expect(dry.body).toMatchObject({ response: null, error: { code: "cross_host_redirect" }, read: { status: "unavailable" }, recorded: false });
      expect((await app.db.query<{ n: number }>("SELECT COUNT(*) AS n FROM chain_records"))[0].n).toBe(before);
    } finally {
      await svc.close();
    }
  });

  it("a dry run shows the request with the secret masked, the response and the read it would record, recording nothing", async () => {
    const post = social.publish("dry text", { visibleAfterMs: 0 });
    await defineVerifier(socialVerifier(social.base, { name: "dry", tool: "social.dry", checksAt: ["10m"], pendingUntil: "10m" }));
    const id = await publish("social.dry", post.id, "dry text");
    const before = (await app.db.query<{ n: number }>("SELECT COUNT(*) AS n FROM chain_records"))[0].n;
    const dry = await call("/api/v1/verifiers/dry/dry-run", { operation_id: id });
    expect(dry.status).toBe(200);
    expect(dry.body.request.headers).toEqual({ Authorization: "Bearer {env.SOCIAL_READ_TOKEN}" });
    expect(dry.body.response).toMatchObject({ status: 200, content_type: "application/json" });
    expect(JSON.parse(dry.body.response.excerpt)).toEqual({ data: { id: post.id, text: "dry text", sha256: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) } });
    expect(dry.body.read).toMatchObject({ status: "match", evidence: { object_id: post.id }, reader: { identity: "verifier:dry@1" } });
    expect(JSON.stringify(dry.body)).not.toContain(SECRET);
    expect((await app.db.query<{ n: number }>("SELECT COUNT(*) AS n FROM chain_records"))[0].n).toBe(before);
    expect((await operation(id)).stages.filter((s: any) => s.stage === "canonical_read")).toEqual([]);
  });
});

describe("RECONCILE_VERIFIER_ENV: the only variables a verifier may send", () => {
  it("an admin cannot send an instance credential anywhere: saving and dry-running a verifier naming it are refused, nothing is sent or saved", async () => {
    const svc = await service((_req, res) => res.writeHead(200).end("{}"));
    try {
      const leak = socialVerifier(`http://127.0.0.1:${svc.port}`, { name: "leak", tool: "social.leak", checksAt: ["0s"], pendingUntil: "0s" });
      (leak.request as { headers: Record<string, string> }).headers = { Authorization: "Bearer {env.SOCIAL_READ_TOKEN}", "X-Key": "{env.AWS_SECRET_ACCESS_KEY}" };
      const saved = await call("/api/v1/verifiers", leak);
      expect(saved.status).toBe(422);
      expect(saved.body.error.code).toBe("invalid_request");
      expect(saved.body.error.message).toBe(
        "request.headers.X-Key: {env.AWS_SECRET_ACCESS_KEY}: this server lets verifiers use only the environment variables RECONCILE_VERIFIER_ENV names (SOCIAL_READ_TOKEN)",
      );
      expect(saved.body.error.details).toEqual([{ path: "request.headers.X-Key", code: "secret_not_allowed", message: expect.stringContaining("{env.AWS_SECRET_ACCESS_KEY}") }]);
      expect((await call("/api/v1/verifiers/leak")).status).toBe(404);
      const id = await publish("social.leak", "p-1");
      const dry = await call("/api/v1/verifiers/leak/dry-run", { operation_id: id, definition: leak });
      expect(dry.status).toBe(422);
      expect(dry.body.error.message).toContain("{env.AWS_SECRET_ACCESS_KEY}");
      expect(JSON.stringify([saved.body, dry.body])).not.toContain(INSTANCE_CREDENTIAL);
      expect(svc.seen).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

describe("RECONCILE_VERIFIER_ENV grants variables per project: a project's own admin never reaches an instance credential", () => {
  /** Runs store calls on this suite's database (the server's), as startVerifierApp does. */
  async function onAppDatabase<T>(fn: () => Promise<T>): Promise<T> {
    const previous = process.env.DATABASE_URL;
    process.env.DATABASE_URL = app.db.url;
    try {
      return await fn();
    } finally {
      await (await import("@/lib/store/db/db")).disconnect();
      process.env.DATABASE_URL = previous;
    }
  }

  it("Alice, admin of project alpha only, cannot save or dry-run {env.SOCIAL_READ_TOKEN} to her own host; an older definition that names it is not sent and says why", async () => {
    const svc = await service((_req, res) => res.writeHead(200).end("{}"));
    try {
      const slug = `alpha${++counter}${Date.now() % 100000}`;
      const made = await call("/api/v1/projects", { slug, name: "Alpha" });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const alice = await onAppDatabase(async () => {
        const { createUser } = await import("@/lib/store/people/users");
        const { projectBySlug, setMember } = await import("@/lib/store/people/projects");
        const { createApiToken } = await import("@/lib/store/people/api-tokens");
        const { inInstance } = await import("@/lib/store/db/project-context");
        const email = `alice-${slug}@verifiers.test`;
        const project = (await projectBySlug(slug))!;
        await createUser({ email, password: "alice-password-1", role: "viewer", actor: "itest", via: "cli" });
        await inInstance(() => setMember({ projectId: project.id, email, role: "admin", actor: "itest" }));
        return (await createApiToken({ email, name: "alice", scopes: ["admin", "ingest", "verify", "read"], project: project.id, actor: "itest" })).token;
      });
      const asAlice = (path: string, body?: unknown) => api(app.app.base, alice, path, body);

      const steal = socialVerifier(`http://127.0.0.1:${svc.port}`, { name: "steal", tool: "alpha.post", checksAt: ["0s"], pendingUntil: "0s" });
      (steal.request as { headers: Record<string, string> }).headers = { Authorization: "Bearer {env.SOCIAL_READ_TOKEN}" };
      const saved = await asAlice("/api/v1/verifiers", steal);
      expect(saved.status, JSON.stringify(saved.body)).toBe(422);
      expect(saved.body.error.message).toBe(
        `request.headers.Authorization: {env.SOCIAL_READ_TOKEN}: this server lets project ${slug}'s verifiers use no environment variables (RECONCILE_VERIFIER_ENV grants it none); keep this project's credentials as its own secrets ({secret.NAME})`,
      );
      expect(saved.body.error.details).toEqual([{ path: "request.headers.Authorization", code: "secret_not_allowed", message: expect.stringContaining("{env.SOCIAL_READ_TOKEN}") }]);
      expect((await asAlice("/api/v1/verifiers/steal")).status).toBe(404);

      const op = await asAlice("/api/v1/receipts", { operation_id: `alpha-op-${counter}`, tool: { name: "alpha.post" }, intent: { effect: "post" }, receipt: { status: "accepted", receipt_id: "p-1", observed_at: new Date().toISOString() } });
      expect(op.status, JSON.stringify(op.body)).toBe(201);
      const dry = await asAlice("/api/v1/verifiers/steal/dry-run", { operation_id: `alpha-op-${counter}`, definition: steal });
      expect(dry.status).toBe(422);
      expect(dry.body.error.message).toContain("{env.SOCIAL_READ_TOKEN}");

      // A definition saved in alpha before the grant was narrowed (written here past the API): its
      // dry run and its scheduled check fill nothing in and send nothing, saying why.
      await onAppDatabase(async () => {
        const { inProject } = await import("@/lib/store/db/project-context");
        const { projectBySlug } = await import("@/lib/store/people/projects");
        const { saveVerifierVersion } = await import("@/lib/store/settings/verifiers");
        const { verifierDefinitionSchema } = await import("@/lib/domain/verifier");
        const project = (await projectBySlug(slug))!;
        await inProject(project, () => saveVerifierVersion(verifierDefinitionSchema.parse(steal), "before-the-grant@verifiers.test"));
      });
      const older = await asAlice("/api/v1/verifiers/steal/dry-run", { operation_id: `alpha-op-${counter}` });
      expect(older.status, JSON.stringify(older.body)).toBe(200);
      expect(older.body.error).toEqual({ code: "template", message: `the environment variable SOCIAL_READ_TOKEN is not one this server lets project ${slug}'s verifiers use (RECONCILE_VERIFIER_ENV); nothing was sent` });
      expect(older.body.response).toBeNull();
      expect(JSON.stringify([saved.body, dry.body, older.body])).not.toContain(SECRET);
      expect(svc.seen).toEqual([]);

      // The default project (the instance's admins) still may: the same definition saves there.
      const inDefault = socialVerifier(social.base, { name: "instance-own", tool: "default.post", checksAt: ["10m"], pendingUntil: "10m" });
      expect((await call("/api/v1/verifiers", inDefault)).status).toBe(201);
    } finally {
      await svc.close();
    }
  });
});

describe("stored secrets: {secret.NAME}", () => {
  it("stored encrypted and never answered; a check sends it, shown as {secret.NAME}; replaced and deleted as chained events", async () => {
    const STORED = "stored-credential-1729";
    const put = (value: string) => call("/api/v1/verifier-secrets/SOCIAL_STORED", { value }, "PUT");
    const first = await put("first-value-0000");
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ created: true, secret: { name: "SOCIAL_STORED", updated_by: expect.any(String) } });
    const replaced = await put(STORED);
    expect(replaced.status).toBe(200);
    expect(replaced.body.created).toBe(false);
    // Sealed at rest: neither value is in the database's row, nor in the chain.
    const rows = await app.db.query<{ sealed: string }>("SELECT sealed FROM verifier_secrets WHERE name = 'SOCIAL_STORED'");
    expect(rows).toHaveLength(1);
    expect(rows[0].sealed).toMatch(/^v1\./);
    const events = await app.db.query<{ payload: string }>("SELECT payload FROM chain_records WHERE kind = 'security' AND payload LIKE '%verifier.secret_%' ORDER BY seq");
    expect(events.map((e) => JSON.parse(e.payload))).toEqual([
      expect.objectContaining({ type: "verifier.secret_set", name: "SOCIAL_STORED", replaced: false }),
      expect.objectContaining({ type: "verifier.secret_set", name: "SOCIAL_STORED", replaced: true }),
    ]);
    expect(JSON.stringify([rows, events])).not.toMatch(/first-value|stored-credential/);

    // A verifier sends it; the dry run shows it as {secret.SOCIAL_STORED}, and the list names its user.
    const post = social.publish("stored text", { visibleAfterMs: 0 });
    const def = socialVerifier(social.base, { name: "stored", tool: "social.stored", checksAt: ["10m"], pendingUntil: "10m" });
    (def.request as { headers: Record<string, string> }).headers = { Authorization: "Bearer {secret.SOCIAL_STORED}" };
    await defineVerifier(def);
    const id = await publish("social.stored", post.id, "stored text");
    const seen = social.seen.length;
    const dry = await call("/api/v1/verifiers/stored/dry-run", { operation_id: id });
    expect(dry.status).toBe(200);
    expect(dry.body.request.headers).toEqual({ Authorization: "Bearer {secret.SOCIAL_STORED}" });
    expect(dry.body.read).toMatchObject({ status: "match" });
    expect(social.seen.slice(seen).map((r) => r.authorization)).toEqual([`Bearer ${STORED}`]);
    const list = await call("/api/v1/verifier-secrets");
    expect(list.status).toBe(200);
    expect(list.body.items.find((s: any) => s.name === "SOCIAL_STORED")).toMatchObject({ used_by: ["stored"] });
    expect(JSON.stringify(list.body)).not.toContain(STORED);

    // Refusals: a name {secret.NAME} cannot name, a value with a line break; nothing stored.
    expect((await call("/api/v1/verifier-secrets/bad-name", { value: "x" }, "PUT")).status).toBe(422);
    const broken = await call("/api/v1/verifier-secrets/SPLIT", { value: "a\r\nX-Injected: 1" }, "PUT");
    expect(broken.status).toBe(422);
    expect(broken.body.error.message).toBe("value must be one line of printable ASCII (what an HTTP header can carry), without spaces at either end");

    // An answer that echoes the secret: the evidence taken from it is masked like the excerpt.
    const echo = await service((req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ self: `https://api.example/x?key=${req.headers["x-key"]}` })));
    try {
      const echoing = {
        ...socialVerifier(`http://127.0.0.1:${echo.port}`, { name: "echoing", tool: "social.echoing", checksAt: ["10m"], pendingUntil: "10m" }),
        expect: [{ when: { status: 200 }, read: "match", evidence: { url: "/self" } }],
      };
      (echoing.request as { headers: Record<string, string> }).headers = { "X-Key": "{secret.SOCIAL_STORED}" };
      await defineVerifier(echoing);
      const echoId = await publish("social.echoing", "e-1");
      const echoed = await call("/api/v1/verifiers/echoing/dry-run", { operation_id: echoId });
      expect(echoed.body.read).toMatchObject({ status: "match", evidence: { url: "https://api.example/x?key=•••" } });
      expect(JSON.stringify(echoed.body)).not.toContain(STORED);
      await call("/api/v1/verifiers/echoing", undefined, "DELETE");
    } finally {
      await echo.close();
    }

    // Sealed under another AUTH_SECRET (a restored backup, a changed secret): the check says what to do.
    const { sealText } = await import("@/lib/domain/sealed");
    await app.db.execute("UPDATE verifier_secrets SET sealed = $1 WHERE name = $2", [sealText(STORED, "another-auth-secret-0123456789abcdef", "verifier secrets v1"), "SOCIAL_STORED"]);
    const unopened = await call("/api/v1/verifiers/stored/dry-run", { operation_id: id });
    expect(unopened.status).toBe(200);
    expect(unopened.body.error.message).toBe(
      "the stored secret SOCIAL_STORED cannot be opened: it was sealed under another AUTH_SECRET; an admin sets it again under Verifiers, Secrets ({secret.SOCIAL_STORED})",
    );
    expect(unopened.body.read.status).toBe("unavailable");

    // Deleted: the next check cannot be filled in, and says so; the list names it as missing.
    expect((await call("/api/v1/verifier-secrets/SOCIAL_STORED", undefined, "DELETE")).status).toBe(200);
    expect((await call("/api/v1/verifier-secrets/SOCIAL_STORED", undefined, "DELETE")).status).toBe(404);
    const after = await call("/api/v1/verifiers/stored/dry-run", { operation_id: id });
    expect(after.body.error.message).toBe("no secret named SOCIAL_STORED is stored on this server ({secret.SOCIAL_STORED}; an admin adds it under Verifiers, Secrets)");
    expect(social.seen.length).toBe(seen + 1);
    expect((await call("/api/v1/verifier-secrets")).body.missing).toContainEqual({ name: "SOCIAL_STORED", used_by: ["stored"] });
  });
});

describe("without RECONCILE_VERIFIER_ALLOW_PRIVATE", () => {
  let strict: VerifierApp;
  beforeAll(async () => {
    strict = await startVerifierApp("verifiers-strict", { RECONCILE_VERIFIER_ALLOW_HTTP: "1", SOCIAL_READ_TOKEN: SECRET, RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" });
  });
  afterAll(async () => strict?.stop());

  it("a URL whose host resolves to 127.0.0.1 is refused, never asked; the check records unavailable naming the setting", async () => {
    const svc = await service((_req, res) => res.writeHead(200).end("{}"));
    try {
      const s = (path: string, body?: unknown) => api(strict.app.base, strict.token, path, body);
      const def = socialVerifier(`http://localhost:${svc.port}`, { name: "loopback", tool: "social.loopback", checksAt: ["0s"], pendingUntil: "0s" });
      expect((await s("/api/v1/verifiers", def)).status).toBe(201);
      const r = await s("/api/v1/receipts", { operation_id: "op-loopback", tool: { name: "social.loopback" }, intent: { params: { text: "x" } }, receipt: { status: "accepted", receipt_id: "p", observed_at: new Date().toISOString() } });
      expect(r.status).toBe(201);
      const dry = await s("/api/v1/verifiers/loopback/dry-run", { operation_id: "op-loopback" });
      expect(dry.body.error.code).toBe("private_address");
      expect(dry.body.error.message).toMatch(/localhost resolved to (127\.0\.0\.1|::1)\b.*RECONCILE_VERIFIER_ALLOW_PRIVATE=1/);
      const read = await until("the unavailable read", async () => {
        const op = (await s("/api/v1/operations/op-loopback")).body;
        return verifierReads(op)[0]?.payload;
      });
      expect(read).toMatchObject({ status: "unavailable", verifier: { http_status: null, attempts: 5 } });
      expect(read.verifier.error).toMatch(/^private_address: /);
      expect(svc.seen).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});
