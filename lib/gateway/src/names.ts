/**
 * The names the gateway shows for what its upstreams offer (tools, prompts, resources, resource
 * templates): an item's own name, or `{upstream}.{name}` for every item whose name another
 * upstream also offers; for tools under `"names": "prefixed"`, always `{upstream}__{tool}` in the
 * alphabet every model API accepts. And the way back, from a name a client sends to the upstream
 * that owns it. Pure.
 */
import { createHash } from "node:crypto";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";

export type Exposed<T> = { exposed: string; upstream: string; original: string; item: T };

/** Each item under its exposed name (`key` is its name: a tool's or prompt's name, a resource's URI, a template). */
export function exposeByKey<T>(byUpstream: Map<string, T[]>, key: (item: T) => string): Exposed<T>[] {
  const count = new Map<string, number>();
  for (const items of byUpstream.values()) for (const k of new Set(items.map(key))) count.set(k, (count.get(k) ?? 0) + 1);
  const out: Exposed<T>[] = [];
  for (const [upstream, items] of byUpstream) {
    for (const item of items) {
      const original = key(item);
      out.push({ exposed: (count.get(original) ?? 0) > 1 ? `${upstream}.${original}` : original, upstream, original, item });
    }
  }
  return out;
}

/**
 * How tools are named: `plain` (default) a tool's own name, `{upstream}.{tool}` when another
 * upstream offers the same; `prefixed` always `{upstream}__{tool}` (prefixedName).
 */
export const NAME_SCHEMES = ["plain", "prefixed"] as const;
export type NameScheme = (typeof NAME_SCHEMES)[number];

/** The longest function name several model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`). */
export const MAX_TOOL_NAME = 64;
const SUFFIX = 8;

/**
 * `{upstream}__{tool}` in `[a-zA-Z0-9_-]` (any other character becomes `_`), at most 64
 * characters: a longer one is cut and ends in `_` and 8 hex digits of the SHA-256 of the
 * upstream and tool as they are, so it stays the same from run to run and tells apart two long
 * names that differ only past the cut.
 */
export function prefixedName(upstream: string, tool: string): string {
  const key = `${upstream}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (key.length <= MAX_TOOL_NAME) return key;
  const digest = createHash("sha256").update(`${upstream}\u0000${tool}`).digest("hex").slice(0, SUFFIX);
  return `${key.slice(0, MAX_TOOL_NAME - SUFFIX - 1)}_${digest}`;
}

/** Two upstreams' tools (or one upstream's two) that come out under one name: the earlier is kept. */
export type NameClash = { name: string; kept: { upstream: string; original: string }; dropped: { upstream: string; original: string } };

/** A clash in words, naming both upstreams and what to do. */
export function clashMessage(c: NameClash, scheme: NameScheme): string {
  const who = (x: { upstream: string; original: string }) => `the upstream ${x.upstream}'s tool ${JSON.stringify(x.original)}`;
  const fix = c.kept.upstream === c.dropped.upstream ? `that upstream offers two tools under one name` : `rename one of the upstreams ${c.kept.upstream} and ${c.dropped.upstream}`;
  return `tool names clash under "names": "${scheme}": ${who(c.kept)} and ${who(c.dropped)} both become ${JSON.stringify(c.name)} (${fix})`;
}

/**
 * Each tool under its exposed name in the scheme, and the clashes: two tools under one name
 * (prefixed: names that clean or cut to the same; plain: a tool's own name equal to another's
 * `{upstream}.{tool}`). Of a clash, the tool `earlier` exposed under that name is kept, else the
 * first in the upstreams' order. An upstream listing one tool twice is no clash (the first is kept).
 */
export function exposeTools<T>(
  byUpstream: Map<string, T[]>,
  key: (item: T) => string,
  scheme: NameScheme,
  earlier: (name: string) => { upstream: string; original: string } | undefined = () => undefined,
): { exposed: Exposed<T>[]; clashes: NameClash[] } {
  const candidates =
    scheme === "plain" ? exposeByKey(byUpstream, key) : [...byUpstream].flatMap(([upstream, items]) => items.map((item) => ({ exposed: prefixedName(upstream, key(item)), upstream, original: key(item), item })));
  const byName = new Map<string, Exposed<T>[]>();
  for (const c of candidates) {
    const same = byName.get(c.exposed) ?? [];
    if (!same.some((x) => x.upstream === c.upstream && x.original === c.original)) same.push(c);
    byName.set(c.exposed, same);
  }
  const exposed: Exposed<T>[] = [];
  const clashes: NameClash[] = [];
  for (const [name, same] of byName) {
    const was = earlier(name);
    const kept = same.find((x) => was && x.upstream === was.upstream && x.original === was.original) ?? same[0];
    exposed.push(kept);
    for (const x of same) if (x !== kept) clashes.push({ name, kept: { upstream: kept.upstream, original: kept.original }, dropped: { upstream: x.upstream, original: x.original } });
  }
  return { exposed, clashes };
}

/**
 * The upstream a resource URI goes to, and the URI it knows: a listed resource by its exposed
 * URI; else the first exposed template the URI matches (a clash's template carries its upstream's
 * prefix, which is taken off); else `{upstream}.{uri}` naming an upstream that offers resources;
 * else the only upstream that offers resources. Null: none can be told.
 */
export function routeUri(
  uri: string,
  listed: ReadonlyMap<string, Exposed<unknown>>,
  templates: readonly Exposed<unknown>[],
  withResources: readonly string[],
): { upstream: string; uri: string } | null {
  const hit = listed.get(uri);
  if (hit) return { upstream: hit.upstream, uri: hit.original };
  for (const t of templates) {
    let matches = false;
    try {
      matches = new UriTemplate(t.exposed).match(uri) !== null;
    } catch {
      matches = false;
    }
    if (matches) return { upstream: t.upstream, uri: t.exposed === t.original ? uri : uri.slice(t.upstream.length + 1) };
  }
  const prefixed = [...withResources].sort((a, b) => b.length - a.length).find((u) => uri.startsWith(`${u}.`));
  if (prefixed) return { upstream: prefixed, uri: uri.slice(prefixed.length + 1) };
  return withResources.length === 1 ? { upstream: withResources[0], uri } : null;
}
