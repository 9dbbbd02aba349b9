import { describe, expect, it } from "vitest";
import { headline, keyArgument, resultText, shortId } from "./headline";

describe("the key argument a page leads a call with", () => {
  it("is a naming argument's value, best first, wherever it sits among the arguments", () => {
    expect(keyArgument({ content: "# Report\n…", path: "out/report.md" })).toEqual({ key: "path", value: "out/report.md", named: false });
    expect(keyArgument({ body: "hi", subject: "Invoice", to: "ana@example.com" })).toEqual({ key: "to", value: "ana@example.com", named: false });
    expect(keyArgument({ URL: "https://example.com/a", title: "A" })?.value).toBe("https://example.com/a");
    expect(keyArgument({ recipients: ["a@x.io", "b@x.io", "c@x.io", "d@x.io"] })?.value).toBe("a@x.io, b@x.io, c@x.io +1");
  });

  it("is an id-like argument next, never the call's own request id or idempotency key", () => {
    expect(keyArgument({ request_id: "charge-1", customer_id: "cus_42", amount: 480 })).toEqual({ key: "customer_id", value: "cus_42", named: false });
    expect(keyArgument({ idempotency_key: "k-1", id: "inv_7" })?.value).toBe("inv_7");
  });

  it("is next an amount, said with its key and currency", () => {
    expect(keyArgument({ request_id: "charge-1", currency: "EUR", amount: 480 })).toEqual({ key: "amount", value: "480 EUR", named: true });
    expect(keyArgument({ request_id: "charge-1", amount: 480 })).toEqual({ key: "amount", value: "480", named: true });
  });

  it("is otherwise the first short one-line string, then the first number, said with its key", () => {
    expect(keyArgument({ request_id: "charge-1", ms: 480, currency: "EUR" })).toEqual({ key: "currency", value: "EUR", named: true });
    expect(keyArgument({ request_id: "charge-1", ms: 480 })).toEqual({ key: "ms", value: "480", named: true });
    expect(keyArgument({ text: "x".repeat(61), n: 2 })).toEqual({ key: "n", value: "2", named: true });
  });

  it("takes a naming value's first line, cut to 60 characters", () => {
    expect(keyArgument({ title: "First line\nsecond" })?.value).toBe("First line");
    const long = keyArgument({ path: `${"d/".repeat(40)}f.txt` })!.value;
    expect(long).toHaveLength(60);
    expect(long.endsWith("…")).toBe(true);
  });

  it("is null for no arguments, non-objects, and values that say nothing", () => {
    for (const p of [undefined, null, "path", [1, 2], {}, { path: "", nested: { path: "x" } }, { flag: null }]) expect(keyArgument(p)).toBeNull();
  });

  it("looks at the first 200 keys only", () => {
    const params: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) params[`k${i}`] = { deep: i };
    params.path = "late.txt";
    expect(keyArgument(params)).toBeNull();
  });
});

describe("the headline of an operation", () => {
  it("is tool · target · key argument, each part only when there is one", () => {
    expect(headline({ tool: "write_file", target: "fs", params: { path: "out/report.md", content: "…" } })).toBe("write_file · fs · out/report.md");
    expect(headline({ tool: "billing.charge", target: "tools", params: { amount: 480, currency: "EUR", request_id: "r" } })).toBe("billing.charge · tools · amount: 480 EUR");
    expect(headline({ tool: "crm.notify", target: null })).toBe("crm.notify");
    expect(headline({ tool: "x.post", target: "x.com/@acme\nsecond line" })).toBe("x.post · x.com/@acme");
  });

  it("is null without a tool: the page leads with the id", () => {
    expect(headline({ tool: null, target: "fs", params: { path: "a" } })).toBeNull();
    expect(headline({ tool: "  ", target: "fs" })).toBeNull();
  });
});

describe("an id shown short", () => {
  it("cuts a digest or a UUID inside it to 8 characters", () => {
    expect(shortId(`gw:${"9f86d081".repeat(8)}:3`)).toBe("gw:9f86d081…:3");
    expect(shortId("mcp:6f1c2e0a-1b2c-4d3e-8f90-a1b2c3d4e5f6")).toBe("mcp:6f1c2e0a…");
    expect(shortId(`gw-id:${"ab".repeat(32)}`)).toBe("gw-id:abababab…");
  });

  it("leaves the words of an id someone chose whole, however long", () => {
    expect(shortId("op-2026-08-28-x-post-001")).toBe("op-2026-08-28-x-post-001");
    const long = "op-e2e-false-claim-1733520000000-desktop-and-a-few-more-words";
    expect(shortId(long)).toBe(long);
    // Hex shorter than a digest (a date, a short hash someone typed) is words too.
    expect(shortId("deploy-abc123def")).toBe("deploy-abc123def");
  });
});

describe("what a tool answered, as text", () => {
  it("reads a string, the gateway's text, an MCP result's text parts, or an output field", () => {
    expect(resultText("done")).toBe("done");
    expect(resultText({ text: "charged 480 EUR", structuredContent: { id: "ch_1" } })).toBe("charged 480 EUR");
    expect(resultText({ content: [{ type: "text", text: "a" }, { type: "image", data: "…" }, { type: "text", text: "b" }] })).toBe("a\nb");
    expect(resultText({ output: "42 rows" })).toBe("42 rows");
  });

  it("is null for a result with no text", () => {
    for (const r of [undefined, null, "  ", 42, [], { id: 7 }, { content: [{ type: "image" }] }]) expect(resultText(r)).toBeNull();
  });
});
