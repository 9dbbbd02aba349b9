/**
 * The gateway's approval calls (docs/API.md "Approvals"), typed: read an approval (long-polling
 * while it is pending) and take an approved call to forward it. The operation id is put in the
 * path by operationPath(), the one place ids are escaped; an id that cannot name an operation is
 * refused here, unsent.
 */
import { operationPath } from "./operation-id.js";
import { errorOf } from "./response.js";
import type { Approval, ApprovalAnswer } from "./types.js";

type Api = (method: "GET" | "POST", path: string, opts: { body?: unknown; timeoutMs?: number; signal?: AbortSignal }) => Promise<{ status: number; body: unknown }>;

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The server long-polls at most 30 s (`wait`); a request then waits this much longer for the answer. */
const WAIT_MARGIN_MS = 15_000;

/** The path, or the refusal of an id that cannot name an operation (never put in a URL). */
function pathOf(operationId: string): { path: string } | { refused: ApprovalAnswer } {
  try {
    return { path: `${operationPath(operationId)}/approval` };
  } catch (e) {
    return { refused: { kind: "refused", status: 422, code: "invalid_operation_id", message: `${messageOf(e)}; nothing was sent` } };
  }
}

async function ask(api: Api, expect: number, method: "GET" | "POST", path: string, opts: { body?: unknown; timeoutMs?: number; signal?: AbortSignal }): Promise<ApprovalAnswer> {
  let res;
  try {
    res = await api(method, path, opts);
  } catch (e) {
    return { kind: "unreachable", error: messageOf(e) };
  }
  if (res.status === expect && res.body && typeof res.body === "object") return { kind: "found", approval: res.body as Approval };
  return { kind: "refused", status: res.status, ...errorOf(res.status, res.body) };
}

/** `GET /api/v1/operations/{id}/approval?wait=N`: `waitSeconds` is rounded and kept within 0–30 (the server's bounds). */
export function readApproval(api: Api, operationId: string, opts: { waitSeconds?: number; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ApprovalAnswer> {
  const p = pathOf(operationId);
  if ("refused" in p) return Promise.resolve(p.refused);
  const wait = Math.min(30, Math.max(0, Math.round(opts.waitSeconds ?? 0)));
  return ask(api, 200, "GET", wait > 0 ? `${p.path}?wait=${wait}` : p.path, {
    timeoutMs: opts.timeoutMs ?? wait * 1000 + WAIT_MARGIN_MS,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** `POST /api/v1/operations/{id}/approval/use`: found (201) means this caller took the approved call and may forward it, once. */
export function takeApproval(api: Api, operationId: string, take: { params_digest: string; rule_version?: string }, opts: { signal?: AbortSignal } = {}): Promise<ApprovalAnswer> {
  const p = pathOf(operationId);
  if ("refused" in p) return Promise.resolve(p.refused);
  return ask(api, 201, "POST", `${p.path}/use`, {
    body: { params_digest: take.params_digest, ...(take.rule_version ? { rule_version: take.rule_version } : {}) },
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}
