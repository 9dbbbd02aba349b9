import { describe, expect, it } from "vitest";
import { exposeByKey, routeUri } from "./names";

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
