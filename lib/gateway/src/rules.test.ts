import { describe, expect, it } from "vitest";
import { parseConfig, parseDuration, ConfigError } from "./config";
import { attemptId, callerId, callKey, RecentCalls } from "./operation-id";
import { approvalNeeded, effectiveRule, holds, paramsDigest, ruleFor } from "./rules";
import { paramsDigest as serverDigest } from "@/lib/domain/approval";

const base = { reconcile: { url: "http://localhost:3000" }, upstreams: { social: { command: ["node", "s.js"] } } };

describe("the gateway's configuration", () => {
  it("fills in defaults and reads durations", () => {
    const c = parseConfig(base);
    expect(c).toMatchObject({ listen: { stdio: true }, dedupe_window: 120_000, approval_expires: 600_000, timeout: 60_000, tools: {} });
    expect(c.reconcile.token_env).toBe("RECONCILE_TOKEN");
    expect(parseDuration("10m")).toBe(600_000);
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("soon")).toBeNull();
  });

  it("names every problem with its path", () => {
    const bad = {
      reconcile: { url: "ftp://x" },
      upstreams: { "bad name": { command: [] } },
      tools: { "billing.charge": { approval: { when: [{ pointer: "amount", gt: 1, lt: 2 }], expires: "later" } }, x: { colour: "red" } },
    };
    let message = "";
    try {
      parseConfig(bad, "gw.json");
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/^gw\.json is not valid:/);
    for (const path of ["reconcile.url", "upstreams.bad name", "tools.billing.charge.approval.when.0.pointer", "tools.billing.charge.approval.when.0", "tools.billing.charge.approval.expires", "tools.x"]) {
      expect(message).toContain(`  ${path}:`);
    }
  });
});

describe("tool rules", () => {
  const tools = parseConfig({ ...base, tools: { "billing.charge": { critical: true }, "billing.*": { record: false }, "*": { dedupe: true } } }).tools;
  it("takes the exact name, else the longest matching pattern", () => {
    expect(ruleFor(tools, "billing.charge")?.key).toBe("billing.charge");
    expect(ruleFor(tools, "billing.refund")?.key).toBe("billing.*");
    expect(ruleFor(tools, "social.publish")?.key).toBe("*");
    expect(ruleFor({}, "x")).toBeNull();
  });
  it("an exact rule on any spelling beats every pattern: a catch-all never hides billing.charge", () => {
    const rules = parseConfig({ ...base, tools: { "*": { dedupe: true }, "billing.charge": { critical: true, approval: { when: [{ pointer: "/amount", gt: 100 }] } } } }).tools;
    // The billing upstream's charge, exposed as "charge" (no clash): "*" matches the exposed name first.
    const found = effectiveRule(rules, ["charge", "billing.charge", "charge"], undefined);
    expect(found.key).toBe("billing.charge");
    expect(approvalNeeded("charge", found, { amount: 5000 }, 60_000)?.rule).toBe("charge: /amount > 100");
    // Exposed with its prefix (a clash), and under the upstream's own name: the same rule.
    expect(effectiveRule(rules, ["billing.charge", "billing.charge", "charge"], undefined).key).toBe("billing.charge");
    expect(effectiveRule({ ...rules, charge: { record: false } }, ["charge", "billing.charge", "charge"], undefined).key).toBe("charge");
    // Among patterns, the longest on any spelling: "billing.*" is more specific than "*".
    const patterns = parseConfig({ ...base, tools: { "*": { dedupe: true }, "billing.*": { critical: true } } }).tools;
    expect(effectiveRule(patterns, ["charge", "billing.charge", "charge"], undefined).key).toBe("billing.*");
    expect(effectiveRule(patterns, ["publish", "social.publish", "publish"], undefined).key).toBe("*");
  });
  it("lets an upstream's destructive hint only make a tool stricter", () => {
    expect(effectiveRule({}, "rm", { destructiveHint: true }).rule).toEqual({ critical: true });
    expect(effectiveRule({}, "read", { readOnlyHint: true }).rule).toEqual({});
    expect(effectiveRule({ rm: { critical: false } }, "rm", { destructiveHint: true }).rule).toEqual({ critical: false });
  });
});

describe("approval conditions", () => {
  it("compare the value at a JSON pointer", () => {
    const args = { amount: 250, currency: "EUR", tags: ["a/b"], nested: { "a/b": 1 }, text: "120" };
    expect(holds({ pointer: "/amount", gt: 100 }, args)).toBe(true);
    expect(holds({ pointer: "/amount", lte: 100 }, args)).toBe(false);
    expect(holds({ pointer: "/text", gt: 100 }, args)).toBe(true);
    expect(holds({ pointer: "/currency", gt: 1 }, args)).toBe(false);
    expect(holds({ pointer: "/currency", in: ["USD", "EUR"] }, args)).toBe(true);
    expect(holds({ pointer: "/currency", eq: "EUR" }, args)).toBe(true);
    expect(holds({ pointer: "/missing", ne: "x" }, args)).toBe(true);
    expect(holds({ pointer: "/missing", exists: false }, args)).toBe(true);
    expect(holds({ pointer: "/nested/a~1b", eq: 1 }, args)).toBe(true);
    expect(holds({ pointer: "/tags/0", eq: "a/b" }, args)).toBe(true);
  });

  it("hold a call when one holds (or always without conditions), naming the rule and its version", () => {
    const tools = parseConfig({ ...base, tools: { "billing.charge": { approval: { when: [{ pointer: "/amount", gt: 100 }], expires: "5m" } }, "social.delete": { approval: {} } } }).tools;
    const charge = (amount: number) => approvalNeeded("billing.charge", ruleFor(tools, "billing.charge")!, { amount }, 600_000);
    expect(charge(50)).toBeNull();
    expect(charge(250)).toMatchObject({ rule: "billing.charge: /amount > 100", expiresMs: 300_000 });
    expect(charge(250)!.rule_version).toMatch(/^billing\.charge@[0-9a-f]{12}$/);
    expect(approvalNeeded("social.delete", ruleFor(tools, "social.delete")!, {}, 600_000)).toMatchObject({ rule: "social.delete: every call", expiresMs: 600_000 });
    const changed = parseConfig({ ...base, tools: { "billing.charge": { approval: { when: [{ pointer: "/amount", gt: 50 }] } } } }).tools;
    expect(approvalNeeded("billing.charge", ruleFor(changed, "billing.charge")!, { amount: 250 }, 1)!.rule_version).not.toBe(charge(250)!.rule_version);
  });

  it("digest the arguments exactly as the server does", () => {
    const args = { b: [1, 2, { z: "é", a: null }], a: 1.5e-7, c: "\u2028" };
    expect(paramsDigest(args)).toBe(serverDigest(args));
  });
});

describe("operation ids", () => {
  it("repeat within the window, count deliberate repeats after it, and never dedupe a dedupe: false tool", () => {
    const recent = new RecentCalls(120_000);
    const key = callKey("social", "publish", { text: "hi" }, "session-1");
    expect(recent.next(key, 0, true)).toEqual({ id: `gw:${key}:1`, repeat: false });
    expect(recent.next(key, 60_000, true)).toEqual({ id: `gw:${key}:1`, repeat: true });
    expect(recent.next(key, 60_000 + 120_001, true)).toEqual({ id: `gw:${key}:2`, repeat: false });
    expect(recent.next(key, 60_000 + 120_002, false)).toEqual({ id: `gw:${key}:3`, repeat: false });
    expect(callKey("social", "publish", { text: "hi" }, "session-2")).not.toBe(key);
    // Forgotten (over the bound), a key still never gets an n it had: the counter is the process's.
    const small = new RecentCalls(120_000, 1);
    expect(small.next("a", 0, true).id).toBe("gw:a:1");
    expect(small.next("b", 0, true).id).toBe("gw:b:2");
    expect(small.next("a", 1, true)).toEqual({ id: "gw:a:3", repeat: false });
    expect(callKey("social", "publish", { text: "hi" }, "session-1")).toBe(key);
  });
  it("take the caller's id when usable, else its digest", () => {
    expect(callerId({ request_id: "post-42" }, "/request_id")).toEqual({ id: "post-42" });
    expect(callerId({ request_id: 42 }, "/request_id")).toEqual({ id: "42" });
    expect(callerId({ request_id: "a b/c" }, "/request_id")).toEqual({ id: expect.stringMatching(/^gw-id:[0-9a-f]{64}$/) });
    expect(callerId({}, "/request_id")).toBeNull();
    expect(callerId({ request_id: "x" }, undefined)).toBeNull();
    expect(attemptId("post-42", 1)).toBe("post-42");
    expect(attemptId("post-42", 3)).toBe("post-42~3");
  });
});

describe("a caller's request id is checked as Reconcile checks operation ids, and never reaches a URL as a path step", () => {
  const digest = { id: expect.stringMatching(/^gw-id:[0-9a-f]{64}$/) };
  const own = (v: unknown) => callerId({ request_id: v }, "/request_id");
  it(". and .. become their digest: three calls with the same .. are one operation", () => {
    expect(own(".")).toEqual(digest);
    expect(own("..")).toEqual(digest);
    expect(own("..")).toEqual(own(".."));
    expect(own("..")).not.toEqual(own("."));
  });
  it("%2e, / and a space are delimiters to a URL: their digest", () => {
    expect(own("%2e")).toEqual(digest);
    expect(own("%2e%2e")).toEqual(digest);
    expect(own("/")).toEqual(digest);
    expect(own("../admin")).toEqual(digest);
  });
  it("unicode dots are ids of their own: a URL keeps them as they are", () => {
    expect(own("\uff0e\uff0e")).toEqual({ id: "\uff0e\uff0e" });
    expect(own("\u2024")).toEqual({ id: "\u2024" });
    expect(own("...")).toEqual({ id: "..." });
  });
  it("10,000 characters, or control characters, are refused: the call is not sent", () => {
    expect(own("x".repeat(10_000))).toEqual({ refused: "/request_id is 10000 characters long: an operation id has at most 200" });
    expect(own("a\u0000b")).toEqual({ refused: expect.stringMatching(/control characters/) });
    expect(own("line\nbreak")).toEqual({ refused: expect.stringMatching(/control characters/) });
    expect(own("half\ud800")).toEqual({ refused: expect.stringMatching(/control characters/) });
    // Up to the server's 200, a long id is kept by its digest (attempts add ~n to an id used as it is).
    expect(own("y".repeat(190))).toEqual(digest);
    expect(own("y".repeat(180))).toEqual({ id: "y".repeat(180) });
  });
});

describe("tool names across upstreams", () => {
  it("keeps a tool's own name unless another upstream offers the same, then prefixes both", async () => {
    const { exposedNames } = await import("./upstreams");
    const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
    const { tools: routed, clashes } = exposedNames(
      new Map([
        ["social", [tool("publish"), tool("search")]],
        ["blog", [tool("publish"), tool("draft")]],
      ]),
    );
    expect(clashes).toEqual([]);
    expect(routed.map((t) => [t.name, t.upstream, t.upstreamName])).toEqual([
      ["social.publish", "social", "publish"],
      ["search", "social", "search"],
      ["blog.publish", "blog", "publish"],
      ["draft", "blog", "draft"],
    ]);
    expect(routed[0].tool.name).toBe("social.publish");
  });

  it('"names": "prefixed": every tool under {upstream}__{tool}; a rule still matches the exposed name, {upstream}.{tool} and the own name', async () => {
    const { exposedNames } = await import("./upstreams");
    const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
    const { tools: routed } = exposedNames(new Map([["billing", [tool("charge")]]]), "prefixed");
    const t = routed[0];
    expect([t.name, t.upstream, t.upstreamName, t.tool.name]).toEqual(["billing__charge", "billing", "charge", "billing__charge"]);
    const spellings = [t.name, `${t.upstream}.${t.upstreamName}`, t.upstreamName];
    expect(effectiveRule({ "billing.charge": { critical: true } }, spellings, undefined).key).toBe("billing.charge");
    expect(effectiveRule({ billing__charge: { critical: true } }, spellings, undefined).key).toBe("billing__charge");
    expect(effectiveRule({ charge: { critical: true } }, spellings, undefined).key).toBe("charge");
    expect(effectiveRule({ "billing.*": { critical: true } }, spellings, undefined).key).toBe("billing.*");
    expect(effectiveRule({ "billing__*": { critical: true } }, spellings, undefined).key).toBe("billing__*");
  });
});
