import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";

/**
 * Free-text search (issue 19) through GET /api/v1/operations?q= on the real server, on the
 * database the suite runs on (SQLite by default, PostgreSQL with INTEGRATION_DATABASE_URL):
 * what is found, that the index moves with the records in their transaction, that a rebuild
 * recreates it, the order, paging, and hostile queries.
 */
let token: string;
let reviewToken: string;

beforeAll(async () => {
  token = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  reviewToken = (await principal("reviewer", ["review", "read"])).token;
});

/** A word no other test uses (letters, then digits: one token for both engines). */
const word = () => `w${randomBytes(5).toString("hex")}`;
const num = () => String(10_000_000 + Math.floor(Math.random() * 89_999_999));
const at = (min: number) => new Date(Date.parse("2026-11-20T10:00:00Z") + min * 60_000).toISOString();

type Item = { operation_id: string; cursor: string; match?: { label: string; parts: { text: string; mark: boolean }[] }[] };
async function search(q: string, extra = ""): Promise<{ status: number; items: Item[]; next_cursor: string | null; body: any }> {
  const r = await call(`/api/v1/operations?q=${encodeURIComponent(q)}${extra}`, { token });
  return { status: r.status, items: r.body?.items ?? [], next_cursor: r.body?.next_cursor ?? null, body: r.body };
}
const ids = (items: Item[]) => items.map((i) => i.operation_id);
const marked = (item: Item) => item.match!.flatMap((l) => l.parts.filter((p) => p.mark).map((p) => p.text.toLowerCase()));

function cli(args: string[]) {
  return runCliSync(args);
}

async function refundOperation(tag: string, order: string) {
  const id = unique("op-fts-refund");
  const r = await ingest(token, {
    operation_id: id,
    trajectory_id: unique("run-fts"),
    agent: { name: "billing-agent" },
    tool: { name: "payments.refund" },
    claimed_outcome: "success",
    intent: { target: `order ${order}`, effect: `refund 20.00 EUR ${tag}`, params: { order, amount: "20.00", lines: [{ sku: "Crème brûlée" }] } },
    receipt: { status: "accepted", observed_at: at(0), receipt_id: unique("rcpt-fts"), tool: "payments.charge", params: { order, amount: "20.00" } },
    canonical_read: { status: "mismatch", observed_at: at(2), evidence: { object_id: `ch_${order}`, note: `charged twice ${tag}` } },
  });
  expect(r.status).toBe(201);
  return id;
}

describe("free-text search over what an operator reads", () => {
  it("finds an operation by a word of its tool, a number in its target and params, its evidence and its reason, and says where", async () => {
    const tag = word();
    const order = num();
    const id = await refundOperation(tag, order);

    const byTool = await search(`refund ${tag}`);
    expect(byTool.status).toBe(200);
    expect(ids(byTool.items)).toEqual([id]);
    expect(marked(byTool.items[0])).toContain("refund");

    const byNumber = await search(order);
    expect(ids(byNumber.items)).toEqual([id]);
    expect(byNumber.items[0].match!.map((l) => l.label)).toEqual(expect.arrayContaining(["target"]));
    expect(marked(byNumber.items[0])).toContain(order);

    // Evidence text, an evidence id pasted whole (a phrase), accents and case folded, the reason.
    expect(ids((await search(`charged twice ${tag}`)).items)).toEqual([id]);
    expect(ids((await search(`ch_${order}`)).items)).toEqual([id]);
    expect(ids((await search(`CREME brulee ${tag}`)).items)).toEqual([id]);
    expect(ids((await search(`canonical state conflicts ${tag}`)).items)).toEqual([id]);
    // The receipt's other tool, and a prefix of the last word when asked for (`refu*`).
    expect(ids((await search(`payments.charge ${tag}`)).items)).toEqual([id]);
    expect((await search(`${tag} refu`)).items).toEqual([]);
    expect(ids((await search(`${tag} refu*`)).items)).toEqual([id]);
    // Nothing matches a word that is not there.
    expect((await search(`${tag} ${word()}`)).items).toEqual([]);
  });

  it("still finds an operation by its id, or how the id starts", async () => {
    const tag = word();
    const id = await refundOperation(tag, num());
    expect(ids((await search(id)).items)[0]).toBe(id);
    expect(ids((await search(id.slice(0, -3))).items)).toContain(id);
  });

  it("searches among given operations only (the review queue's \"assigned to me\")", async () => {
    const tag = word();
    const [a, b] = [await refundOperation(tag, num()), await refundOperation(tag, num())];
    const { listOperations, listQuerySchema } = await import("@/lib/store/queries/list-operations");
    const among = async (q: string, only: string[]) => (await listOperations(listQuerySchema.parse({ q }), only)).items.map((i) => i.operation_id);
    expect(new Set(await among(tag, [a, b]))).toEqual(new Set([a, b]));
    expect(await among(tag, [b])).toEqual([b]);
    expect(await among(a, [b])).toEqual([]); // an id prefix too
    expect(await among(tag, [unique("op-none")])).toEqual([]);
    expect(await among(tag, [])).toEqual([]);
  });

  it("a later record and a correction change the document in their own transaction", async () => {
    const tag = word();
    const id = unique("op-fts-later");
    expect((await ingest(token, { operation_id: id, tool: { name: "db.insert" }, receipt: { status: "accepted", observed_at: at(0) } })).status).toBe(201);
    expect((await search(tag)).items).toEqual([]);
    // The read arrives later with the word in its evidence: found as soon as the ingest answered.
    expect((await ingest(token, { operation_id: id, canonical_read: { status: "absent", observed_at: at(1), evidence: `row ${tag} not found` } })).status).toBeLessThan(300);
    expect(ids((await search(tag)).items)).toEqual([id]);
    // A reviewer's reason is searchable too, at once.
    const why = word();
    const c = await call(`/api/v1/operations/${id}/corrections`, { token: reviewToken, body: { action: "resolve", outcome: "not_applied", reason: `the row is missing: ${why}` } });
    expect(c.status).toBe(201);
    const found = await search(why);
    expect(ids(found.items)).toEqual([id]);
    expect(found.items[0].match![0]).toEqual({ label: "correction", parts: [{ text: "the row is missing: ", mark: false }, { text: why, mark: true }] });
    // …and the stage's word is still there after the rewrite.
    expect(ids((await search(tag)).items)).toEqual([id]);
  });

  it("ranks a match in what identifies an operation above one deep in its params; newest first among equals; pages by rank", async () => {
    const tag = word();
    const headId = unique("op-fts-head");
    const bodyId = unique("op-fts-body");
    const same = [unique("op-fts-same"), unique("op-fts-same")];
    await ingest(token, { operation_id: headId, tool: { name: "crm.update" }, intent: { target: `${tag} account`, params: { a: 1 } } });
    await ingest(token, { operation_id: bodyId, tool: { name: "crm.update" }, intent: { target: "another account", params: { deep: { deeper: { note: `see ${tag}` } }, x: "filler words here" } } });
    for (const id of same) await ingest(token, { operation_id: id, tool: { name: "crm.update" }, intent: { target: "same account", params: { note: `see ${tag}` } } });

    const all = await search(tag);
    expect(ids(all.items)[0]).toBe(headId);
    expect(ids(all.items).indexOf(same[1])).toBeLessThan(ids(all.items).indexOf(same[0]));
    expect(new Set(ids(all.items))).toEqual(new Set([headId, bodyId, ...same]));

    // One at a time: every match once, in the same order.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await search(tag, `&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      paged.push(...ids(page.items));
      cursor = page.next_cursor;
    } while (cursor && paged.length < 10);
    expect(paged).toEqual(ids(all.items));

    // order=oldest keeps the chain's order; other filters still apply.
    expect(ids((await search(tag, "&order=oldest")).items)).toEqual([headId, bodyId, ...same]);
    expect(ids((await search(tag, "&outcome=uncertain")).items).length).toBe(4);
    expect((await search(tag, "&outcome=verified")).items).toEqual([]);
  });

  it("hostile queries answer 200 (or 400 for text no database can hold), never an error", async () => {
    const tag = word();
    await refundOperation(tag, num());
    const hostile = [
      '"', '""', "'", "*", "**", "-", "- -", ":", "^", "NEAR(", "NEAR(a b, 2)", "a OR b", "a AND NOT b", "col:refund", "head:refund", "operation_id:x",
      `${tag}"`, `"${tag}`, `${tag}*`, `*${tag}`, `-${tag}`, `(${tag}`, "a & b | !c", "a <-> b", "a:* & b:*", "'a':*", "\\", "\\'", "%", "_", "%_%",
      "!".repeat(200), "'".repeat(200), '"'.repeat(200), "(".repeat(200), "*".repeat(200), ";--".repeat(66), "x ".repeat(100),
      "日本語の検索", "🚀 refund", "ﬁnance", "Ǆ", "\u200b", "e\u0301", "\u202e", "a".repeat(200),
    ];
    for (const q of hostile) {
      const r = await search(q);
      expect(r.status, `${JSON.stringify(q)}: ${JSON.stringify(r.body)}`).toBe(200);
    }
    expect((await search("a\u0000b")).status).toBe(400);
    // FTS syntax around a real word is text: the word is still found.
    for (const q of [`${tag}"`, `"${tag}"`, `${tag}*`, `-${tag}`, `${tag}:`]) expect((await search(q)).items.length, q).toBe(1);
  });

  it("text that would make a word PostgreSQL refuses is stored and searched, never a 500; Korean and Japanese are found", async () => {
    const tag = word();
    const long = "\ufdfa".repeat(300);
    const r = await ingest(token, {
      operation_id: unique("op-search-long"),
      tool: { name: `search.${tag}` },
      intent: { effect: "환불 요청 データ", params: { note: long, hangul: "각".repeat(300), latin: "x".repeat(300) } },
      receipt: { status: "accepted", observed_at: at(1) },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((await search("\ufdfa".repeat(70))).status).toBe(200);
    expect((await search("각".repeat(200))).status).toBe(200);
    for (const q of ["환불", "データ", `${tag} 요청`]) expect(ids((await search(q, `&tool=search.${tag}`)).items), q).toHaveLength(1);
  });

  it("projections:rebuild recreates the index: the same answers, one row per operation", async () => {
    const tag = word();
    const order = num();
    const id = await refundOperation(tag, order);
    await call(`/api/v1/operations/${id}/corrections`, { token: reviewToken, body: { action: "resolve", outcome: "not_applied", reason: `reviewed ${tag}` } });
    const queries = [order, `refund ${tag}`, `reviewed ${tag}`, `ch_${order}`];
    const before = await Promise.all(queries.map((q) => search(q)));
    expect(ids(before[2].items)).toEqual([id]);

    const r = cli(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);
    const after = await Promise.all(queries.map((q) => search(q)));
    expect(after.map((a) => a.items)).toEqual(before.map((b) => b.items));
    const client = await db();
    const [{ n }] = await client.$queryRawUnsafe<{ n: number | bigint }[]>("SELECT COUNT(*) AS n FROM operation_search");
    expect(Number(n)).toBe(await client.operationView.count());
  });
});
