/**
 * Which strings can name an operation, exactly as the server checks them (`operationIdSchema` in
 * the server's wire format; a test holds the two equal): 1 to 200 printable characters without
 * whitespace or the URL's delimiters, and never `.` or `..`, which a URL reads as a step of its
 * path: `GET /api/v1/operations/..` is `GET /api/v1/` (`%2e%2e` too, by the URL standard), so
 * such an id could be written but never read back.
 */
export const MAX_OPERATION_ID = 200;

const PRINTABLE = /^[^\s/?#%\\\u0000-\u001f\u007f\p{Cs}]+$/u;

/** Why `id` cannot name an operation, in words; null when it can. */
export function operationIdProblem(id: string): string | null {
  if (id.length === 0) return "must not be empty";
  if (id.length > MAX_OPERATION_ID) return `must be at most ${MAX_OPERATION_ID} characters`;
  if (!PRINTABLE.test(id)) return "must be printable, without spaces or / ? # % \\";
  if (id === "." || id === "..") return "must not be . or .. (a URL reads those as a step of its path)";
  return null;
}

/** The id as one path segment of a URL: percent-encoded; refused (a TypeError) when it cannot name an operation. */
export function operationPath(id: string): string {
  const problem = operationIdProblem(id);
  if (problem) throw new TypeError(`not an operation id (${JSON.stringify(id.slice(0, 100))}): ${problem}`);
  return `/api/v1/operations/${encodeURIComponent(id)}`;
}
