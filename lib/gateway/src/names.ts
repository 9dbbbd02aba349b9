/**
 * The names the gateway shows for what its upstreams offer (tools, prompts, resources, resource
 * templates): an item's own name, or `{upstream}.{name}` for every item whose name another
 * upstream also offers; and the way back, from a name a client sends to the upstream that owns it.
 * Pure.
 */
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
