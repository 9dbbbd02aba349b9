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
