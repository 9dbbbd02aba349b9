import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The house's rules, read off the code: no import circle between rooms (the folders under
 * `lib/`, and `app/`, `components/`), none between the store's own rooms (`lib/store/*\/`), and
 * the few directions that must hold (the domain is pure; the store knows no HTTP and no
 * sessions). Tests, test helpers, benchmarks and harnesses may reach anywhere and are left out.
 */
const root = path.resolve(import.meta.dirname, "..");
const SKIP_DIRS = new Set(["node_modules", ".next", "generated", "testing"]);
const TEST_FILE = /\.(test|itest|rtest|pgtest)\.tsx?$/;
const NOT_PRODUCT = ["lib/bench/", "lib/reliability/", "lib/eval/"];
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g;

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (SKIP_DIRS.has(name)) continue;
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.tsx?$/.test(name) && !TEST_FILE.test(name)) out.push(p);
    }
  };
  for (const top of ["lib", "app", "components"]) walk(path.join(root, top));
  return out.filter((f) => !NOT_PRODUCT.some((prefix) => path.relative(root, f).startsWith(prefix)));
}

/** Every import between project files: [importer, imported], both repository paths without extension. */
function imports(): [string, string][] {
  const edges: [string, string][] = [];
  for (const file of sourceFiles()) {
    const from = path.relative(root, file).replace(/\.tsx?$/, "");
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1];
      let target: string;
      if (spec.startsWith("@/")) target = spec.slice(2);
      else if (spec.startsWith("./") || spec.startsWith("../")) target = path.relative(root, path.resolve(path.dirname(file), spec));
      else continue;
      edges.push([from, target.replace(/\.tsx?$/, "")]);
    }
  }
  return edges;
}

/** `lib/x` for a file under lib/x/, else its top folder (`app`, `components`). */
const room = (p: string) => {
  const parts = p.split("/");
  return parts[0] === "lib" ? `lib/${parts[1]}` : parts[0];
};
/** `lib/store/x` for a file under lib/store/x/, `lib/store` for one directly in it. */
const storeRoom = (p: string) => {
  const parts = p.split("/");
  return parts.length > 3 ? parts.slice(0, 3).join("/") : "lib/store";
};

/** The circles in a graph of rooms, each as "a → b → … → a" (one per strongly connected group). */
function circles(edges: [string, string][]): string[] {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of edges) if (a !== b) (next.get(a) ?? next.set(a, new Set()).get(a)!).add(b);
  const found: string[] = [];
  const seen = new Set<string>();
  for (const start of [...next.keys()].sort()) {
    // A shortest way back to `start`, by breadth-first search.
    const back = new Map<string, string>();
    const queue = [...(next.get(start) ?? [])].map((n) => (back.set(n, start), n));
    while (queue.length) {
      const node = queue.shift()!;
      if (node === start) break;
      for (const n of next.get(node) ?? []) if (!back.has(n)) (back.set(n, node), queue.push(n));
    }
    if (!back.has(start)) continue;
    const way = [start];
    for (let n = back.get(start)!; n !== start; n = back.get(n)!) way.unshift(n);
    way.unshift(start);
    const key = [...new Set(way)].sort().join(",");
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(way.join(" → "));
  }
  return found;
}

describe("the house's rooms", () => {
  const edges = imports();

  it("finds the code it reads (a sanity check on the scan itself)", () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges.some(([a, b]) => room(a) === "lib/api" && room(b) === "lib/store")).toBe(true);
  });

  it("has no import circle between rooms", () => {
    expect(circles(edges.map(([a, b]) => [room(a), room(b)]))).toEqual([]);
  });

  it("has no import circle between the store's rooms", () => {
    const inStore = edges.filter(([a, b]) => a.startsWith("lib/store/") && b.startsWith("lib/store/"));
    expect(circles(inStore.map(([a, b]) => [storeRoom(a), storeRoom(b)]))).toEqual([]);
  });

  it("keeps the store's rooms in their order: each imports only the rooms listed before it in lib/store/README.md", () => {
    const order = ["lib/store", "lib/store/db", "lib/store/work", "lib/store/chain", "lib/store/projection", "lib/store/settings", "lib/store/people", "lib/store/review", "lib/store/ingest", "lib/store/queries", "lib/store/archive"];
    const rooms = new Set(readdirSync(path.join(root, "lib/store")).filter((n) => n !== "generated" && statSync(path.join(root, "lib/store", n)).isDirectory()).map((n) => `lib/store/${n}`));
    expect([...rooms].sort()).toEqual(order.slice(1).sort());
    const rank = (r: string) => order.indexOf(r);
    const upward = edges
      .filter(([a, b]) => a.startsWith("lib/store/") && b.startsWith("lib/store/") && !b.startsWith("lib/store/generated/"))
      .filter(([a, b]) => storeRoom(a) !== storeRoom(b) && storeRoom(b) !== "lib/store" && rank(storeRoom(b)) > rank(storeRoom(a)));
    expect(upward).toEqual([]);
  });

  it("keeps the domain pure: it imports no other room", () => {
    const out = edges.filter(([a, b]) => room(a) === "lib/domain" && room(b) !== "lib/domain");
    expect(out).toEqual([]);
  });

  it("keeps the store below HTTP and sessions: it imports no lib/api, lib/auth, lib/actions or next/*", () => {
    const out = edges.filter(([a, b]) => room(a) === "lib/store" && ["lib/api", "lib/auth", "lib/actions", "app", "components"].includes(room(b)));
    expect(out).toEqual([]);
    const next = sourceFiles().filter((f) => path.relative(root, f).startsWith("lib/store/") && /from\s+["']next\//.test(readFileSync(f, "utf8")));
    expect(next).toEqual([]);
  });
});
