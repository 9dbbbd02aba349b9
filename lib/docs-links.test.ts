import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The docs stand alone: every relative link in a Markdown file of the repository leads to a file
 * that is there (and, with `#anchor`, to a heading of it), and no file names a path in the
 * specification folder beside the repository, which users do not have.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
/** Not the repository's own text: installed packages, build output, test output, local data. */
const SKIPPED = new Set(["node_modules", ".next", "test-results", "playwright-report", "data", ".git", ".reconcile-gateway"]);
const SKIPPED_PATHS = new Set(["lib/store/generated", "lib/client/dist"]);
const TEXT = /\.(md|ts|tsx|mts|mjs|js|json|prisma|sql|ya?ml|css|sh|txt)$/;

function files(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    const rel = path.relative(ROOT, full);
    if (SKIPPED.has(d.name) || SKIPPED_PATHS.has(rel)) return [];
    if (d.isDirectory()) return files(full);
    return d.isFile() ? [rel] : [];
  });
}

const all = files();
const markdown = all.filter((f) => f.endsWith(".md"));
const read = (rel: string) => readFileSync(path.join(ROOT, rel), "utf8");

/** The text outside fenced code blocks. */
const unfenced = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
/** The text outside fenced code blocks and inline code: what a reader sees as links. */
const prose = (text: string) => unfenced(text).replace(/`[^`\n]*`/g, "");

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of unfenced(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1].replace(/`/g, ""));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Every problem with a file's relative links, as "file: link (why)". */
function danglingLinks(rel: string, text = read(rel)): string[] {
  const problems: string[] = [];
  for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const link = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http(s):, mailto: and other schemes
    const [target, anchor] = link.split("#", 2);
    if (!target) {
      if (anchor && !anchorsOf(text).has(anchor)) problems.push(`${rel}: ${link} (no heading with that anchor)`);
      continue;
    }
    const file = path.resolve(ROOT, path.dirname(rel), decodeURIComponent(target));
    if (path.relative(ROOT, file).startsWith("..")) {
      problems.push(`${rel}: ${link} (outside the repository)`);
      continue;
    }
    if (!existsSync(file)) {
      problems.push(`${rel}: ${link} (no such file)`);
      continue;
    }
    if (anchor && file.endsWith(".md") && statSync(file).isFile() && !anchorsOf(readFileSync(file, "utf8")).has(anchor)) {
      problems.push(`${rel}: ${link} (no heading with that anchor)`);
    }
  }
  return problems;
}

/** A path under the specification folder next to the repository, however it is written (a package's own sub-path, like `sdk/shared/…`, is not one). */
const SPEC_FOLDER = new RegExp(String.raw`(?<![\w@./-])(?:\.\./)*` + "shared" + String.raw`/[\w.*-]`, "g");

describe("the repository's docs stand alone", () => {
  it("finds the Markdown files it checks", () => {
    expect(markdown).toEqual(expect.arrayContaining(["README.md", "docs/API.md", "docs/GATEWAY.md", "docs/INTEGRATIONS.md", "lib/gateway/README.md"]));
  });

  it("every relative link in a Markdown file leads to a file of the repository, and an anchor to a heading there", () => {
    expect(markdown.flatMap((f) => danglingLinks(f))).toEqual([]);
  });

  it("no file names a path in the specification folder outside the repository", () => {
    const mentions = all
      .filter((f) => TEXT.test(f))
      .flatMap((f) =>
        read(f)
          .split("\n")
          .flatMap((line, i) => [...line.matchAll(SPEC_FOLDER)].map((m) => `${f}:${i + 1}: ${line.slice(Math.max(0, m.index - 30), m.index + 40).trim()}`)),
      );
    expect(mentions).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("the anchor of a heading is GitHub's", () => {
    expect(slug("Approvals (calls held at the tool boundary)")).toBe("approvals-calls-held-at-the-tool-boundary");
    expect(slug("Ingest on SQLite — `npm run bench:ingest`".replace(/`/g, ""))).toBe("ingest-on-sqlite--npm-run-benchingest");
  });

  it("a link to a missing file, outside the repository, or to a missing heading is caught; code and web links are not checked", () => {
    const text = [
      "[gone](nope.md) [up](../../outside.md) [bad anchor](API.md#no-such-heading) [good](API.md#projects) [self](#no-such-heading)",
      "[web](https://example.com/x.md) `[code](nope.md)`",
      "```",
      "[fenced](nope.md)",
      "```",
    ].join("\n");
    expect(danglingLinks("docs/example.md", text)).toEqual([
      "docs/example.md: nope.md (no such file)",
      "docs/example.md: ../../outside.md (outside the repository)",
      "docs/example.md: API.md#no-such-heading (no heading with that anchor)",
      "docs/example.md: #no-such-heading (no heading with that anchor)",
    ]);
  });

  it("a mention of the folder is caught however it is written; a package's sub-path is not", () => {
    const caught = (s: string) => [...s.matchAll(SPEC_FOLDER)].length > 0;
    expect(caught(["(", "shared", "/GATEWAY.md)"].join(""))).toBe(true);
    expect(caught(["see ../", "shared", "/OPERATIONS.md"].join(""))).toBe(true);
    expect(caught(["`", "shared", "/fixtures/x.json`"].join(""))).toBe(true);
    expect(caught(["@modelcontextprotocol/sdk/", "shared", "/protocol.js"].join(""))).toBe(false);
    expect(caught("the shared state")).toBe(false);
  });
});
