/**
 * Structural checks on parsed JSON before any schema sees it. Iterative on purpose: a
 * 20,000-deep document must not overflow the stack of whatever walks it later (validation,
 * canonical hashing).
 */
export const MAX_DEPTH = 64;

export type JsonProblem = { path: string; message: string };

export function checkJsonShape(value: unknown, maxDepth = MAX_DEPTH): JsonProblem | null {
  const stack: { v: unknown; depth: number; path: string }[] = [{ v: value, depth: 0, path: "" }];
  while (stack.length) {
    const { v, depth, path } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= maxDepth) {
      return { path: path || "(record)", message: `nesting is deeper than ${maxDepth} levels` };
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ v: item, depth: depth + 1, path: `${path}[${i}]` }));
    } else {
      for (const key of Object.keys(v)) {
        const childPath = path ? `${path}.${key}` : key;
        if (key === "__proto__") {
          return { path: childPath, message: "the key \"__proto__\" is not allowed" };
        }
        stack.push({ v: (v as Record<string, unknown>)[key], depth: depth + 1, path: childPath });
      }
    }
  }
  return null;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
