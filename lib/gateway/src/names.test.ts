import { describe, expect, it } from "vitest";
import { clashMessage, exposeByKey, exposeTools, MAX_TOOL_NAME, prefixedName, routeUri } from "./names";

const prompts = (...names: string[]) => names.map((name) => ({ name }));

describe("names for what the upstreams offer", () => {
  it("keeps a name no other upstream offers, and prefixes every copy of a shared one with its upstream", () => {
    const out = exposeByKey(
      new Map([
        ["docs", prompts("summarize", "review")],
        ["code", prompts("review", "lint")],
      ]),
      (p) => p.name,
    );
    expect(out.map((e) => [e.exposed, e.upstream, e.original])).toEqual([
      ["summarize", "docs", "summarize"],
      ["docs.review", "docs", "review"],
      ["code.review", "code", "review"],
      ["lint", "code", "lint"],
    ]);
  });

  it("counts a name an upstream lists twice once (no clash with itself)", () => {
    const out = exposeByKey(new Map([["docs", prompts("a", "a")]]), (p) => p.name);
    expect(out.map((e) => e.exposed)).toEqual(["a", "a"]);
  });
});

describe("routing a resource URI back to its upstream", () => {
  const resources = exposeByKey(
    new Map([
      ["files", [{ uri: "file:///readme.md" }, { uri: "mem://shared" }]],
      ["notes", [{ uri: "mem://shared" }]],
    ]),
    (r) => r.uri,
  );
  const listed = new Map(resources.map((r) => [r.exposed, r]));
  const templates = exposeByKey(
    new Map([
      ["files", [{ uriTemplate: "file:///{path}" }, { uriTemplate: "mem://item/{id}" }]],
      ["notes", [{ uriTemplate: "mem://item/{id}" }, { uriTemplate: "note://{id}" }]],
    ]),
    (t) => t.uriTemplate,
  );

  it("sends a listed URI to its upstream, taking a clash's prefix off", () => {
    expect(routeUri("file:///readme.md", listed, templates, ["files", "notes"])).toEqual({ upstream: "files", uri: "file:///readme.md" });
    expect(routeUri("notes.mem://shared", listed, templates, ["files", "notes"])).toEqual({ upstream: "notes", uri: "mem://shared" });
    expect(routeUri("files.mem://shared", listed, templates, ["files", "notes"])).toEqual({ upstream: "files", uri: "mem://shared" });
  });

  it("sends an unlisted URI to the upstream whose template it matches", () => {
    expect(routeUri("note://42", listed, templates, ["files", "notes"])).toEqual({ upstream: "notes", uri: "note://42" });
    expect(routeUri("file:///other.txt", listed, templates, ["files", "notes"])).toEqual({ upstream: "files", uri: "file:///other.txt" });
    expect(routeUri("notes.mem://item/7", listed, templates, ["files", "notes"])).toEqual({ upstream: "notes", uri: "mem://item/7" });
  });

  it("with nothing matching: the one upstream with resources, else none", () => {
    expect(routeUri("x://y", new Map(), [], ["files"])).toEqual({ upstream: "files", uri: "x://y" });
    expect(routeUri("x://y", new Map(), [], ["files", "notes"])).toBeNull();
    expect(routeUri("notes.x://y", new Map(), [], ["files", "notes"])).toEqual({ upstream: "notes", uri: "x://y" });
  });
});

describe('"names": "prefixed": names every model API accepts', () => {
  const MODEL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

  it("is always {upstream}__{tool}, whatever else is offered (a name never changes because another upstream added a tool)", () => {
    expect(prefixedName("billing", "charge")).toBe("billing__charge");
    const alone = exposeTools(new Map([["billing", prompts("charge")]]), (p) => p.name, "prefixed");
    const shared = exposeTools(new Map([["billing", prompts("charge")], ["shop", prompts("charge")]]), (p) => p.name, "prefixed");
    expect(alone.exposed.map((e) => e.exposed)).toEqual(["billing__charge"]);
    expect(shared.exposed.map((e) => [e.exposed, e.upstream, e.original])).toEqual([
      ["billing__charge", "billing", "charge"],
      ["shop__charge", "shop", "charge"],
    ]);
    expect(shared.clashes).toEqual([]);
  });

  it("cleans every other character to _ (the . many model APIs refuse, spaces, slashes, non-ASCII)", () => {
    expect(prefixedName("fs", "files.read")).toBe("fs__files_read");
    expect(prefixedName("fs", "read file/é:x")).toBe("fs__read_file___x");
    for (const tool of ["a.b.c", "ünïcode", "x y", "$weird!", ""]) expect(prefixedName("up", tool)).toMatch(MODEL_NAME);
  });

  it("cuts a name over 64 to 64, ending in a stable suffix that tells apart names differing past the cut", () => {
    const long = "t".repeat(80);
    const a = prefixedName("upstream", `${long}_a`);
    const b = prefixedName("upstream", `${long}_b`);
    expect(a).toHaveLength(MAX_TOOL_NAME);
    expect(a).toMatch(MODEL_NAME);
    expect(a).toMatch(/^upstream__t+_[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(prefixedName("upstream", `${long}_a`)).toBe(a); // the same every run
    // Exactly 64 is kept whole.
    expect(prefixedName("u", "x".repeat(61))).toBe(`u__${"x".repeat(61)}`);
  });

  it("two tools that clean to one name are a clash naming both upstreams; the first is kept", () => {
    const out = exposeTools(new Map([["a", prompts("b__c")], ["a__b", prompts("c")]]), (p) => p.name, "prefixed");
    expect(out.exposed.map((e) => [e.exposed, e.upstream])).toEqual([["a__b__c", "a"]]);
    expect(out.clashes).toEqual([{ name: "a__b__c", kept: { upstream: "a", original: "b__c" }, dropped: { upstream: "a__b", original: "c" } }]);
    expect(clashMessage(out.clashes[0], "prefixed")).toBe(
      'tool names clash under "names": "prefixed": the upstream a\'s tool "b__c" and the upstream a__b\'s tool "c" both become "a__b__c" (rename one of the upstreams a and a__b)',
    );
    // One upstream's two tools that clean alike clash too.
    const own = exposeTools(new Map([["fs", prompts("read.file", "read_file")]]), (p) => p.name, "prefixed");
    expect(own.clashes).toHaveLength(1);
    expect(clashMessage(own.clashes[0], "prefixed")).toContain("that upstream offers two tools under one name");
  });

  it("the tool exposed earlier under a name keeps it when a later list clashes with it", () => {
    // "a" + "__" + "_b" and "a_" + "__" + "b" are both a___b.
    const lists = new Map([["a", prompts("_b")], ["a_", prompts("b")]]);
    expect(exposeTools(lists, (p) => p.name, "prefixed").exposed.map((e) => e.upstream)).toEqual(["a"]); // no history: the first
    const kept = exposeTools(lists, (p) => p.name, "prefixed", (name) => (name === "a___b" ? { upstream: "a_", original: "b" } : undefined));
    expect(kept.exposed.map((e) => e.upstream)).toEqual(["a_"]);
    expect(kept.clashes).toEqual([{ name: "a___b", kept: { upstream: "a_", original: "b" }, dropped: { upstream: "a", original: "_b" } }]);
    const out = exposeTools(new Map([["up", prompts("a.b", "a_b")]]), (p) => p.name, "prefixed", () => ({ upstream: "up", original: "a_b" }));
    expect(out.exposed.map((e) => e.original)).toEqual(["a_b"]);
    expect(out.clashes[0]).toMatchObject({ kept: { original: "a_b" }, dropped: { original: "a.b" } });
  });

  it("plain: today's names; a clash is only two tools still under one name ({upstream}.{tool} against a tool of that name)", () => {
    const ok = exposeTools(new Map([["docs", prompts("review")], ["code", prompts("review")]]), (p) => p.name, "plain");
    expect(ok.exposed.map((e) => e.exposed)).toEqual(["docs.review", "code.review"]);
    expect(ok.clashes).toEqual([]);
    const bad = exposeTools(new Map([["docs", prompts("review", "code.review")], ["code", prompts("review")]]), (p) => p.name, "plain");
    expect(bad.clashes).toEqual([{ name: "code.review", kept: { upstream: "docs", original: "code.review" }, dropped: { upstream: "code", original: "review" } }]);
  });
});
