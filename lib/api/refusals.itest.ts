/**
 * Refusals a person can read (lib/domain/refusal.ts), through the real server: every route that
 * validates a body or a query, sent bad ones, answers a 4xx whose `message` names the field and
 * carries none of the schema library's wording, with the schema's issues in `details`; nothing
 * is stored. And a setting naming a tool no operation has used is saved, with a warning.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { EFFECTIVE_OUTCOMES } from "@/lib/domain/outcomes";
import { SCHEMA_JARGON } from "@/lib/domain/refusal";
import { baseUrl, call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";
import { callFormAction, signInHttp } from "@/lib/testing/sessions";

let admin: string;
let agent: string;
let endpointId: string;
const created: string[] = [];

beforeAll(async () => {
  admin = (await principal("admin", ["admin", "read", "review", "ingest", "export"])).token;
  agent = (await principal("reviewer", ["ingest", "read"])).token;
  const made = await call("/api/v1/webhooks", { token: admin, body: { url: "https://hooks.invalid/refusals", enabled: false } });
  expect(made.status).toBe(201);
  endpointId = made.body.id;
  created.push(endpointId);
  return async () => {
    for (const id of created) await call(`/api/v1/webhooks/${id}`, { token: admin, method: "DELETE" });
  };
});

type Case = [what: string, method: string, path: () => string, body: unknown, field: RegExp];
const op = "op-refusals";
const cases: Case[] = [
  ["an unknown outcome", "GET", () => "/api/v1/operations?outcome=nope", undefined, /^outcome must be one of /],
  ["a limit that is no number", "GET", () => "/api/v1/operations?limit=abc", undefined, /^limit must be a whole number from 1 to 200$/],
  ["a limit of 0", "GET", () => "/api/v1/operations?limit=0", undefined, /^limit must be a whole number from 1 to 200$/],
  ["a date that is no date", "GET", () => "/api/v1/operations?since=yesterday", undefined, /^since must be an RFC 3339 date-time/],
  ["an unknown parameter", "GET", () => "/api/v1/operations?colour=red", undefined, /^the query has an unknown parameter "colour"; the accepted parameters are outcome, /],
  ["needs_review not a boolean", "GET", () => "/api/v1/operations?needs_review=yes", undefined, /^needs_review must be true or false$/],
  ["metrics since after until", "GET", () => "/api/v1/metrics?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", undefined, /^until: since must not be after until$/],
  ["an approval status", "GET", () => "/api/v1/approvals?status=maybe", undefined, /^status must be one of pending, approved, denied, expired$/],
  ["an approvals limit", "GET", () => "/api/v1/approvals?limit=500", undefined, /^limit must be a whole number from 1 to 200$/],
  ["a wait that is no number", "GET", () => `/api/v1/operations/${op}/approval?wait=abc`, undefined, /^wait must be a whole number of seconds from 0 to 30$/],
  ["an export format", "GET", () => "/api/v1/audit/export?format=xml", undefined, /^format must be one of /],
  ["a deliveries limit", "GET", () => `/api/v1/webhooks/${endpointId}/deliveries?limit=x&before=y`, undefined, /^limit must be a whole number from 1 to 200; before must be an ISO 8601 date-time$/],
  ["a record with a wrong receipt status", "POST", () => "/api/v1/receipts", { operation_id: unique("op"), receipt: { status: "ok", observed_at: "2026-08-28T10:00:00Z" } }, /^receipt\.status must be accepted or rejected$/],
  ["a record without its id", "POST", () => "/api/v1/receipts", { intent: { effect: "x" } }, /^operation_id is required$/],
  ["a record whose tool is a number", "POST", () => "/api/v1/receipts", { operation_id: unique("op"), intent: {}, tool: 5 }, /^tool must be text or a JSON object$/],
  ["a correction's action", "POST", () => `/api/v1/operations/${op}/corrections`, { action: "undo", reason: "x" }, /^action must be one of resolve, retract, reopen$/],
  ["a correction's empty reason", "POST", () => `/api/v1/operations/${op}/corrections`, { action: "retract", reason: " " }, /^reason must not be empty$/],
  ["a correction's unknown field", "POST", () => `/api/v1/operations/${op}/corrections`, { action: "retract", reason: "x", colour: 1 }, /^the request has an unknown field "colour"; the accepted fields are action, /],
  ["a note too long", "POST", () => `/api/v1/operations/${op}/comments`, { text: "x".repeat(20_001) }, /^text has 20,001 characters; at most [\d,]+ are accepted$/],
  ["a claim's take_over", "POST", () => `/api/v1/operations/${op}/claim`, { take_over: "yes" }, /^take_over must be true or false$/],
  ["an approval decision", "POST", () => `/api/v1/operations/${op}/approval`, { decision: "maybe", reason: "x" }, /^decision must be approve or deny$/],
  ["a forward's digest", "POST", () => `/api/v1/operations/${op}/approval/use`, { params_digest: "md5:x" }, /^params_digest is "sha256:" and 64 hex digits$/],
  ["a verifier's name", "POST", () => "/api/v1/verifiers", { name: 5 }, /^name must be text/],
  ["a dry run's operation id", "POST", () => "/api/v1/verifiers/some-verifier/dry-run", { operation_id: 5 }, /^operation_id must be text$/],
  ["a webhook without url", "POST", () => "/api/v1/webhooks", {}, /^url is required$/],
  ["a webhook's format", "POST", () => "/api/v1/webhooks", { url: "https://hooks.invalid/x", format: "xml" }, /^format must be standard or slack$/],
  ["a webhook's filter list too long", "POST", () => "/api/v1/webhooks", { url: "https://hooks.invalid/x", filters: { tools: Array.from({ length: 51 }, (_, i) => `t${i}`) } }, /^filters\.tools has 51 items; at most 50 are accepted$/],
  ["a webhook's outcome filter", "POST", () => "/api/v1/webhooks", { url: "https://hooks.invalid/x", filters: { outcomes: ["fine"] } }, new RegExp(`^filters\\.outcomes\\[0\\] must be one of ${EFFECTIVE_OUTCOMES.join(", ")}$`)],
  ["a webhook's enabled", "PATCH", () => `/api/v1/webhooks/${endpointId}`, { enabled: "yes" }, /^enabled must be true or false$/],
];

const stored = async () => [await chainCount(), await (await db()).webhookEndpoint.count(), await (await db()).verifierVersion.count()];

describe("every validating route refuses in sentences", () => {
  it.each(cases)("%s", async (_what, method, path, body, sentence) => {
    const before = await stored();
    const r = await call(path(), { token: path().startsWith("/api/v1/receipts") ? agent : admin, method, ...(body === undefined ? {} : { body }) });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.status, r.text).toBeLessThan(500);
    const { message, details } = r.body.error;
    expect(message).toMatch(sentence);
    for (const jargon of SCHEMA_JARGON) expect(message).not.toMatch(jargon);
    // The schema's own account stays, for programs: each issue with its path and code.
    expect(details[0]).toEqual(expect.objectContaining({ path: expect.any(String), code: expect.any(String), message: expect.any(String) }));
    expect(await stored()).toEqual(before);
  });

  it("a batch item's refusal is a sentence too", async () => {
    const r = await call("/api/v1/receipts", { token: agent, body: { records: [{ operation_id: unique("op"), side_effects: [{ name: "", status: "seen" }] }] } });
    expect(r.status).toBe(207);
    expect(r.body.results[0].error.message).toBe("side_effects[0].name must not be empty; side_effects[0].status must be one of observed, not_observed, unknown");
  });
});

describe("a setting naming a tool no operation has used", () => {
  it("webhook filters: saved, with one warning a tool never used (create and edit); none without filters", async () => {
    const used = unique("tool-used");
    expect((await ingest(agent, { operation_id: unique("op"), tool: used, intent: { effect: "x" } })).status).toBe(201);
    const never = [unique("tool-never"), unique("tool-typo")];
    const made = await call("/api/v1/webhooks", { token: admin, body: { url: "https://hooks.invalid/warned", enabled: false, filters: { tools: [used, ...never] } } });
    expect(made.status).toBe(201);
    created.push(made.body.id);
    expect(made.body.warnings).toEqual(never.map((t) => `no operation has used the tool ${t} yet`));
    expect((await call(`/api/v1/webhooks/${made.body.id}`, { token: admin })).body.filters.tools).toEqual([used, ...never]);

    const edited = await call(`/api/v1/webhooks/${made.body.id}`, { token: admin, method: "PATCH", body: { filters: { tools: [never[1], used] } } });
    expect(edited.status).toBe(200);
    expect(edited.body.warnings).toEqual([`no operation has used the tool ${never[1]} yet`]);
    const quiet = await call(`/api/v1/webhooks/${made.body.id}`, { token: admin, method: "PATCH", body: { description: "no filters sent" } });
    expect(quiet.body.warnings).toEqual([]);
    const known = await call("/api/v1/webhooks", { token: admin, body: { url: "https://hooks.invalid/known", enabled: false, filters: { tools: [used] } } });
    created.push(known.body.id);
    expect(known.body.warnings).toEqual([]);
  });

  it("the store's check: many names at once (past one statement's 200), each once, in the order given", async () => {
    const { unusedTools } = await import("@/lib/store/queries/tools");
    const used = [unique("tool-a"), unique("tool-b")];
    for (const tool of used) expect((await ingest(agent, { operation_id: unique("op"), tool, intent: { effect: "x" } })).status).toBe(201);
    const never = Array.from({ length: 450 }, (_, i) => `never-${i}-${unique("t")}`);
    const asked = [never[0], used[0], ...never.slice(1, 300), used[1], never[0], ...never.slice(300)];
    expect(await unusedTools(asked)).toEqual(never);
    expect(await unusedTools([])).toEqual([]);
    expect(await unusedTools(used)).toEqual([]);
  });

  it("audit sampling: the rate is set, and the page is told which tool no operation has used", async () => {
    const who = await principal("admin", ["read"]);
    const { cookie } = await signInHttp(who.email, "integration-password");
    const tool = unique("tool-sampled-never");
    const r = await callFormAction("setSamplingAction", { tool, percent: "5" }, cookie, "/metrics");
    const to = new URL(r.location, "http://x");
    expect(to.searchParams.get("sampling")).toBe(`Sampling 5 % of ${tool}'s verified operations from now on.`);
    expect(to.searchParams.getAll("sampling_warning")).toEqual([`no operation has used the tool ${tool} yet`]);
    expect(await (await db()).auditSampling.findUnique({ where: { tool } })).toMatchObject({ rate: 0.05 });
    const page = await fetch(`${baseUrl}/metrics${to.search}`, { headers: { cookie: cookie! } });
    expect(await page.text()).toContain(`Note: no operation has used the tool ${tool} yet.`);
  });
});
