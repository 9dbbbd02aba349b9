/**
 * Checks requests against a vendor's published API description as its npm package ships it, with
 * the TypeScript compiler: Phoenix's `@arizeai/phoenix-client` ships its OpenAPI document as the
 * types openapi-typescript generates from it (`paths`, src/__generated__/api/v1.ts), and no JSON
 * schema. Each request becomes a typed declaration in a program of its own —
 *   const r0: paths["/v1/span_annotations"]["post"]["requestBody"]["content"]["application/json"] = {…body…};
 * — so a path or method the description lacks, a missing or renamed field, a value outside an
 * enum, or a field the description does not have (object literals are checked for excess
 * properties) is a compile error, named. A vendor that changes its contract fails the check.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

const PHOENIX_TYPES = path.resolve("node_modules/@arizeai/phoenix-client/src/__generated__/api/v1.ts");

export type SeenRequest = { method: string; path: string; query: Record<string, unknown>; body: unknown };

/** The compiler's complaints about these declarations (empty: all conform). */
export function typeErrors(imports: string, declarations: string[]): string[] {
  const file = path.resolve("lib/verdicts/testing/__contract_check__.ts");
  const text = `${imports}\n${declarations.join("\n")}\nexport {};\n`;
  const options: ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [] };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (f) => (path.resolve(f) === file ? text : read(f));
  host.fileExists = (f) => path.resolve(f) === file || exists(f);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (f, v, ...rest) => (path.resolve(f) === file ? ts.createSourceFile(f, text, v) : original(f, v, ...rest));
  const program = ts.createProgram([file], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => !d.file || path.resolve(d.file.fileName) === file)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

/** Each Phoenix request against `paths` of the client's OpenAPI types: path, method, query, JSON body. */
export function phoenixContractErrors(requests: SeenRequest[]): string[] {
  const decls = requests.map((r, i) => {
    const op = `paths[${JSON.stringify(r.path)}][${JSON.stringify(r.method.toLowerCase())}]`;
    return [
      `const body${i}: ${op}["requestBody"]["content"]["application/json"] = ${JSON.stringify(r.body)};`,
      `const query${i}: NonNullable<${op}["parameters"]["query"]> = ${JSON.stringify(r.query)};`,
    ].join("\n");
  });
  return typeErrors(`import type { paths } from ${JSON.stringify(PHOENIX_TYPES.replace(/\.ts$/, ""))};`, decls);
}

/**
 * Langfuse's published API as `@langfuse/core` ships it: no OpenAPI document, but the REST client
 * Fern generates from Langfuse's API definition — each endpoint's method and path in its code, the
 * request type it takes named in its doc comment (`@param {LangfuseAPI.CreateScoreRequest} request`),
 * and those types in its declarations. The endpoints are read from the package's own code, not
 * written down here, so a path or method Langfuse moves or drops is gone from the table.
 */
const LANGFUSE_CORE = path.resolve("node_modules/@langfuse/core/dist");

export type LangfuseEndpoint = { method: string; path: RegExp; template: string; requestType: string | null };

let endpoints: LangfuseEndpoint[] | null = null;
export function langfuseEndpoints(): LangfuseEndpoint[] {
  if (endpoints) return endpoints;
  const code = fs.readFileSync(path.join(LANGFUSE_CORE, "index.mjs"), "utf8");
  const parts = code.split("const _response = await fetcher({");
  endpoints = parts.slice(1).flatMap((part, i) => {
    const head = part.slice(0, 900);
    const url = head.match(/url: url_exports\.join\([\s\S]*?,\s*(["`])([^"`]*)\1\s*\)/);
    const method = head.match(/method: "([A-Z]+)"/);
    if (!url || !method) return [];
    const doc = parts[i].slice(parts[i].lastIndexOf("/**"));
    const type = /\bbody: request\b/.test(head) ? doc.match(/@param \{LangfuseAPI\.(\w+)\} request/) : null;
    const pattern = url[2].split(/\$\{[^}]*\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]+");
    return [{ method: method[1], path: new RegExp(`^${pattern}$`), template: url[2], requestType: type ? type[1] : null }];
  });
  return endpoints;
}

export type LangfuseSeen = SeenRequest & { headers: Record<string, string | string[] | undefined> };

/**
 * Each Langfuse request against that description: an endpoint with its method and path, Basic auth
 * of the project's public and secret key (the client's username and password), and the JSON body
 * type-checked as the endpoint's request type (excess fields, wrong types, values outside an enum).
 */
export function langfuseContractErrors(requests: LangfuseSeen[], keys: { publicKey: string; secretKey: string }): string[] {
  const errors: string[] = [];
  const decls: string[] = [];
  const types = new Set<string>();
  const basic = `Basic ${Buffer.from(`${keys.publicKey}:${keys.secretKey}`).toString("base64")}`;
  requests.forEach((r, i) => {
    const at = `${r.method} ${r.path}`;
    const onPath = langfuseEndpoints().filter((e) => e.path.test(r.path));
    const ep = onPath.find((e) => e.method === r.method.toUpperCase());
    if (!onPath.length) return errors.push(`${at}: Langfuse's API has no path ${r.path}`);
    if (!ep) return errors.push(`${at}: ${r.path} takes ${onPath.map((e) => e.method).join(", ")}, not ${r.method}`);
    if (r.headers.authorization !== basic) errors.push(`${at}: the authorization header is not Basic auth of the public and secret key`);
    if (r.headers["x-langfuse-public-key"] !== keys.publicKey) errors.push(`${at}: X-Langfuse-Public-Key is not the public key`);
    if (!ep.requestType) {
      if (r.body !== null && r.body !== "") errors.push(`${at}: ${ep.template} takes no body`);
      return;
    }
    if (!String(r.headers["content-type"] ?? "").startsWith("application/json")) errors.push(`${at}: the body is not sent as application/json`);
    types.add(ep.requestType);
    decls.push(`const body${i}: ${ep.requestType} = ${JSON.stringify(r.body)};`);
  });
  if (!decls.length) return errors;
  return [...errors, ...typeErrors(`import type { ${[...types].join(", ")} } from ${JSON.stringify(path.join(LANGFUSE_CORE, "index"))};`, decls)];
}
