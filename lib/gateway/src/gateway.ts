/**
 * What the gateway does with each tools/call (docs/GATEWAY.md "Each tools/call"): name the
 * operation, ask the gate about a repeat, hold a risky call for a reviewer, record the intent,
 * forward, record the receipt. It speaks to Reconcile only through the client (records batched,
 * retried, bounded; the approval calls typed); it never touches Reconcile's database.
 */
import { randomUUID } from "node:crypto";
import { McpError, ErrorCode, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Approval, AttemptFields, OperationRecord, Reconcile } from "@reconcile/client";
import type { CallKind, GatewayConfig, ToolRule } from "./config.js";
import { gate, type EarlierAttempt } from "./gate.js";
import type { Journal } from "./journal.js";
import { attemptId, callerId, callKey, RecentCalls, resultId } from "./operation-id.js";
import { approvalNeeded, effectiveRule, paramsDigest, toolKind, type ApprovalNeed } from "./rules.js";
import { metaAtAnswer, metaOf, OUTCOME_META, verdictAnswer, withMeta, type OperationView, type OutcomeMeta } from "./outcome.js";
import type { Elicit } from "./elicitation.js";
import { answerStatus, statusToolDefinition } from "./status-tool.js";
import { UpstreamDown, type RoutedTool, type Upstreams } from "./upstreams.js";
import { callRecord, whatHappened } from "./call-record.js";

/** Who is calling, from the MCP session and request. */
export type CallContext = {
  sessionId: string;
  requestId: string | number;
  client: { name: string; version?: string } | undefined;
  meta: Record<string, unknown> | undefined;
  signal: AbortSignal;
  /** Asks the client what an upstream asks the user (elicitation/create): only when the client declared elicitation. */
  elicit?: Elicit;
  /** Progress to the client, under its own progressToken (only when it asked for it with one). */
  progress?: (progress: number, total?: number, message?: string) => Promise<void>;
};

const MAX_ATTEMPTS = 20;
/** Definite refusals: the upstream did not run the call. Any other JSON-RPC error leaves its fate unknown. */
const REFUSING_CODES = new Set<number>([ErrorCode.InvalidParams, ErrorCode.MethodNotFound, ErrorCode.InvalidRequest, ErrorCode.ParseError]);

const textResult = (text: string, isError = false): CallToolResult => ({ content: [{ type: "text", text }], ...(isError ? { isError: true } : {}) });
const textOf = (r: CallToolResult) =>
  (r.content ?? [])
    .filter((c): c is { type: "text"; text: string } => c.type === "text")
    .map((c) => c.text)
    .join("\n");

type Resolved =
  | { kind: "new"; id: string; recovers: string | null }
  | { kind: "existing"; id: string; op: EarlierAttempt }
  | { kind: "unreachable"; error: string }
  | { kind: "refused"; error: string };

export class Gateway {
  private readonly recent: RecentCalls;
  /** The latest attempt this process knows of, per base id (derived ids are this process's own). */
  private readonly attempts = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** The project's pages in Reconcile (`/p/{slug}`), once the token was checked: the answers' links. */
  private pageBase: string | null = null;

  constructor(
    private readonly config: GatewayConfig,
    private readonly upstreams: Upstreams,
    private readonly rc: Reconcile,
    private readonly journal: Journal,
    private readonly now: () => number = Date.now,
    /** Who the gateway is to Reconcile (a digest of its token): part of an agent's repeat key. */
    private readonly account = "",
  ) {
    this.recent = new RecentCalls(config.dedupe_window);
  }

  /** The project's base path in Reconcile (`/p/{slug}`), as `GET /api/v1/token` answered it. */
  setProjectPath(basePath: string): void {
    this.pageBase = basePath.replace(/\/+$/, "");
  }

  /** An operation's page in Reconcile, when the project is known. */
  private link(id: string): string | null {
    return this.pageBase === null ? null : `${this.config.reconcile.url.replace(/\/+$/, "")}${this.pageBase}/operations/${encodeURIComponent(id)}`;
  }

  /** The status tool's name, unless it is turned off or an upstream offers a tool of that name. */
  private statusTool(): string | null {
    const name = this.config.status_tool;
    return name && !this.upstreams.tool(name) ? name : null;
  }

  listTools(): Tool[] {
    const status = this.statusTool();
    return status ? [...this.upstreams.list(), statusToolDefinition(status)] : this.upstreams.list();
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    if (name === this.statusTool()) return this.status(args, ctx);
    const t = this.upstreams.tool(name);
    if (!t) throw new McpError(ErrorCode.InvalidParams, `no tool named ${JSON.stringify(name)}: tools/list says which there are`);
    const found = effectiveRule(this.config.tools, [name, `${t.upstream}.${t.upstreamName}`, t.upstreamName], t.tool.annotations);
    // The kind from the configured rule, else the hints (a destructive hint's fail-closed default is no rule of the user's).
    const kind = toolKind(found.key === null ? {} : found.rule, t.tool.annotations, this.config.trust_annotations);
    // Unrecorded: a tool the rule says not to record, and a read unless its rule asks for it.
    if (found.rule.record === false || (kind === "read" && found.rule.record !== true)) {
      return this.upstreams.call(t, args, ctx.meta, this.requestOptions(found.rule, ctx), ctx.elicit ?? null).catch((e) => (e instanceof UpstreamDown ? textResult(e.message, true) : Promise.reject(e)));
    }
    if (kind === "read") {
      // A recorded read is never gated: each call is an operation of its own.
      const id = this.recent.next(this.repeatKey(t, args, ctx), this.now(), false).id;
      return this.startNew(t, args, ctx, found, { id, recovers: null }, kind);
    }
    const named = callerId(args, found.rule.operation_id_from);
    if (named && "refused" in named) return textResult(`not sent: ${named.refused}; nothing was recorded`, true);
    const own = named?.id ?? null;
    const next = own ? null : this.recent.next(this.repeatKey(t, args, ctx), this.now(), found.rule.dedupe !== false);
    const base = own ?? next!.id;
    // Calls naming the same operation run one after another here, so a repeat sees what the first did.
    return this.oneAtATime(base, () => this.decide(t, args, ctx, found, base, own === null && !next!.repeat, kind));
  }

  /** What makes two calls the same: upstream, tool, canonical arguments, and whose they are (`dedupe_scope`). */
  private repeatKey(t: RoutedTool, args: Record<string, unknown>, ctx: Pick<CallContext, "sessionId" | "client">): string {
    const scope = this.config.dedupe_scope;
    const who = scope === "session" ? ctx.sessionId : scope === "global" ? "*" : `agent:${ctx.client?.name ?? ""}:${this.account}`;
    return callKey(t.upstream, t.upstreamName, args, who);
  }

  /** The status tool's answer (status-tool.ts): by operation id, or by an earlier call's tool and arguments. */
  private status(args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    return answerStatus(args, ctx, {
      config: this.config,
      upstreams: this.upstreams,
      rc: this.rc,
      lastOperation: (t, callArgs) => {
        const base = this.recent.peek(this.repeatKey(t, callArgs, ctx));
        return base ? attemptId(base, this.attempts.get(base) ?? 1) : null;
      },
    });
  }

  private async oneAtATime<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = this.inFlight.get(id) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.set(id, settled);
    try {
      return await run;
    } finally {
      if (this.inFlight.get(id) === settled) this.inFlight.delete(id);
    }
  }

  private async decide(
    t: RoutedTool,
    args: Record<string, unknown>,
    ctx: CallContext,
    found: { key: string | null; rule: ToolRule },
    base: string,
    fresh: boolean,
    kind: CallKind,
  ): Promise<CallToolResult> {
    const name = t.name;
    const resolved: Resolved = fresh ? { kind: "new", id: base, recovers: null } : await this.resolve(t, base, kind);
    if (resolved.kind === "refused") return textResult(`not sent: Reconcile refused to say what became of the earlier call (${resolved.error}), so a repeat is not safe`, true);
    if (resolved.kind === "unreachable") {
      if (found.rule.critical) return textResult(`Reconcile cannot be reached (${resolved.error}); ${name} is held: it is marked critical, so it is not sent without Reconcile's decision`, true);
      // Open, and recorded later under an id of its own: whatever the earlier attempt was, this never collides with it.
      return this.startNew(t, args, ctx, found, { id: `${base}~u${randomUUID().slice(0, 8)}`, recovers: null, gateOpen: { repeat_of: base, error: resolved.error } }, kind);
    }
    if (resolved.kind === "new") return this.startNew(t, args, ctx, found, resolved, kind);

    const decision = gate(resolved.op, name, { tool: name, params_digest: paramsDigest(args) }, kind === "idempotent" ? "idempotent" : "write");
    const meta = metaOf(resolved.op as OperationView, resolved.id, this.config.reconcile.url);
    switch (decision.kind) {
      case "replay":
        this.attempt(resolved.id, ctx, { answer: "replayed", outcome: meta.outcome, text: decision.text });
        return withMeta({ content: [{ type: "text", text: decision.text }], ...(decision.structured ? { structuredContent: decision.structured } : {}) }, meta);
      case "refuse":
        this.attempt(resolved.id, ctx, { answer: "refused", outcome: meta.outcome, text: decision.text });
        return withMeta(textResult(decision.text, true), meta);
      case "wait":
      case "use_approval":
        this.attempt(resolved.id, ctx, { answer: "waiting", text: `a repeat of ${name}: it waits on the same approval (operation ${resolved.id})` });
        return this.afterApproval(t, args, ctx, found.rule, resolved.id, approvalNeeded(name, found, args, this.config.approval_expires)?.rule_version, kind);
      case "forward_new": // resolve() moves past these; reached only at MAX_ATTEMPTS
        return textResult(`not sent: ${name} was already attempted ${MAX_ATTEMPTS} times under this id; start a new request`, true);
    }
  }

  /**
   * What Reconcile holds of this operation, moving past attempts that may be repeated (a
   * refusal, not applied, an expired approval) to the next one (`{id}~{n}`).
   */
  private async resolve(t: RoutedTool, base: string, kind: CallKind): Promise<Resolved> {
    let k = this.attempts.get(base) ?? 1;
    let previous: string | null = null;
    for (; k <= MAX_ATTEMPTS; k++) {
      const id = attemptId(base, k);
      const read = await this.rc.readOperation(id);
      if (read.kind === "missing") {
        this.remember(base, k);
        return { kind: "new", id, recovers: previous };
      }
      if (read.kind === "refused") return { kind: "refused", error: `${read.status} ${read.code}: ${read.message}` };
      if (read.kind === "unreachable") return { kind: "unreachable", error: read.error };
      const op = { operation_id: id, ...(read.body as EarlierAttempt) };
      if (gate(op, t.name, undefined, kind === "idempotent" ? "idempotent" : "write").kind !== "forward_new" || k === MAX_ATTEMPTS) {
        this.remember(base, k);
        return { kind: "existing", id, op };
      }
      previous = id;
    }
    return { kind: "refused", error: "too many attempts" };
  }

  /** The latest attempt of a base id (bounded: the oldest are forgotten; resolve() then reads from the first again). */
  private remember(base: string, k: number) {
    this.attempts.delete(base);
    if (k > 1) this.attempts.set(base, k);
    if (this.attempts.size > 10_000) this.attempts.delete(this.attempts.keys().next().value!);
  }

  /**
   * How a call goes to its upstream: the client's cancellation (its signal: the SDK sends the
   * upstream notifications/cancelled), and the upstream's progress passed on to the client under
   * the client's own token; progress also restarts the timeout, so a long call that reports keeps
   * going. Progress is asked of the upstream even when the client did not ask for it (it keeps a
   * long call alive); it then goes nowhere.
   */
  private requestOptions(rule: ToolRule, ctx: CallContext) {
    return {
      timeout: rule.timeout ?? this.config.timeout,
      signal: ctx.signal,
      resetTimeoutOnProgress: true,
      onprogress: (p: { progress: number; total?: number; message?: string }) => void ctx.progress?.(p.progress, p.total, p.message).catch(() => undefined),
    };
  }

  private async startNew(
    t: RoutedTool,
    args: Record<string, unknown>,
    ctx: CallContext,
    found: { key: string | null; rule: ToolRule },
    op: { id: string; recovers: string | null; gateOpen?: { repeat_of: string; error: string } },
    kind: CallKind,
  ): Promise<CallToolResult> {
    const need = kind === "read" ? null : approvalNeeded(t.name, found, args, this.config.approval_expires);
    const record = callRecord(t, args, ctx, op.id, kind);
    if (op.recovers) record.recovers = [op.recovers];
    if (op.gateOpen) record.gateway = { gate: "open: Reconcile could not be reached to judge a repeat", ...op.gateOpen };
    if (need) return this.hold(t, args, ctx, found.rule, record, need, kind);
    this.journal.append(record);
    if (found.rule.critical) {
      // Fail closed: not sent unless Reconcile has stored the intent.
      try {
        await this.rc.recordIntent(record, { strict: true });
      } catch (e) {
        this.journal.withdraw(record.operation_id);
        return textResult(`Reconcile cannot be reached (${(e as Error).message}); ${t.name} is held: it is marked critical, so it is not sent unrecorded`, true);
      }
    } else if (this.journal.file) {
      // On disk before the call goes out, so a kill loses nothing; sent with the receipt's batch
      // instead of a round trip per call (bench:gateway). A repeat reads the server only after
      // what is queued for its operation was delivered (readOperation).
      await this.rc.record(record);
    } else {
      await this.rc.recordIntent(record, { strict: false });
    }
    return this.forward(t, args, ctx, found.rule, op.id, kind);
  }

  /** A call that needs approval: its intent asks for it (stored, or the call is not held but refused), then it waits. */
  private async hold(t: RoutedTool, args: Record<string, unknown>, ctx: CallContext, rule: ToolRule, record: OperationRecord, need: ApprovalNeed, kind: CallKind): Promise<CallToolResult> {
    record.approval = { status: "pending", expires_at: new Date(this.now() + need.expiresMs).toISOString(), rule: need.rule, rule_version: need.rule_version };
    this.journal.append(record);
    try {
      await this.rc.recordIntent(record, { strict: true });
    } catch (e) {
      this.journal.withdraw(record.operation_id);
      return textResult(`Reconcile cannot be reached (${(e as Error).message}); ${t.name} needs a reviewer's approval (${need.rule}) and was not sent`, true);
    }
    return this.afterApproval(t, args, ctx, rule, record.operation_id, need.rule_version, kind);
  }

  /** Waits for the reviewer's decision; an approved call is taken (once, across gateways) and forwarded. */
  private async afterApproval(t: RoutedTool, args: Record<string, unknown>, ctx: CallContext, rule: ToolRule, id: string, ruleVersion: string | undefined, kind: CallKind): Promise<CallToolResult> {
    const approval = await this.waitForDecision(id, ctx);
    if ("error" in approval) return textResult(`not sent: ${approval.error}`, true);
    if (approval.status === "denied") return textResult(`not sent: ${t.name} was denied by ${approval.decided_by ?? "a reviewer"}: ${approval.reason ?? ""}`.trim(), true);
    if (approval.status === "expired") {
      const minutes = Math.round((Date.parse(approval.expires_at) - Date.parse(approval.requested_at)) / 60_000);
      return textResult(`not sent: no reviewer approved ${t.name} within ${minutes}m (operation ${id})`, true);
    }
    const taken = await this.rc.useApproval(id, { params_digest: paramsDigest(args), ...(ruleVersion ? { rule_version: ruleVersion } : {}) });
    if (taken.kind === "unreachable") return textResult(`not sent: the approval could not be taken (${taken.error}); nothing was forwarded`, true);
    if (taken.kind === "refused") return textResult(`not sent: ${taken.message} (operation ${id})`, true);
    return this.forward(t, args, ctx, rule, id, kind);
  }

  private async waitForDecision(id: string, ctx: CallContext): Promise<Approval | { error: string }> {
    const started = this.now();
    const every = this.config.approval_progress_every;
    let lastProgress = started;
    let failures = 0;
    for (;;) {
      if (ctx.signal.aborted) return { error: "the client cancelled the call while it waited for approval" };
      const res = await this.rc.approval(id, { waitSeconds: Math.min(30, Math.max(1, Math.round(every / 1000))), timeoutMs: 45_000, signal: ctx.signal });
      if (res.kind === "found") {
        failures = 0;
        const a = res.approval;
        if (a.status !== "pending") return a;
        if (ctx.progress && this.now() - lastProgress >= every - 500) {
          lastProgress = this.now();
          const left = Math.max(0, Math.round((Date.parse(a.expires_at) - this.now()) / 1000));
          await ctx.progress(Math.round((this.now() - started) / 1000), undefined, `waiting for a reviewer's approval in Reconcile (operation ${id}; expires in ${left}s)`).catch(() => undefined);
        }
        continue;
      }
      if (res.kind === "refused" && res.status >= 400 && res.status < 500 && res.status !== 429) {
        return { error: `Reconcile refused to say whether the call was approved (${res.status}: ${res.message})` };
      }
      if (++failures > 30) return { error: "Reconcile could not be reached to learn whether the call was approved" };
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /**
   * Forwards the call and records what came back: accepted, rejected, or nothing when its fate is
   * unknown. The answer carries Reconcile's outcome (`_meta["reconcile/outcome"]`); with
   * `await_verdict`, an accepted call's answer waits for the verdict and says it.
   */
  private async forward(t: RoutedTool, args: Record<string, unknown>, ctx: CallContext, rule: ToolRule, id: string, kind: CallKind): Promise<CallToolResult> {
    let result: CallToolResult;
    try {
      result = await this.upstreams.call(t, args, ctx.meta, this.requestOptions(rule, ctx), ctx.elicit ?? null);
    } catch (e) {
      const code = e instanceof McpError ? e.code : null;
      const message = e instanceof Error ? e.message : String(e);
      if (e instanceof UpstreamDown) {
        // Its server is down (restarting): the call never left, so a repeat is forwarded once it is back.
        await this.record({ operation_id: id, receipt: { status: "rejected", observed_at: new Date(this.now()).toISOString(), raw: { not_sent: true, reason: message } } });
        this.attempt(id, ctx, { answer: "not_sent", outcome: "rejected", text: message });
        return withMeta(textResult(message, true), metaAtAnswer(id, "rejected", kind, this.link(id)));
      }
      if (code !== null && REFUSING_CODES.has(code)) {
        await this.record({ operation_id: id, receipt: { status: "rejected", observed_at: new Date(this.now()).toISOString(), raw: { text: message, jsonrpc_error: code } } });
        return withMeta(textResult(message, true), metaAtAnswer(id, "rejected", kind, this.link(id)));
      }
      // Timed out, the connection dropped, the upstream failed: it may or may not have acted.
      const happened = whatHappened({ aborted: ctx.signal.aborted, timedOut: code === ErrorCode.RequestTimeout, timeoutMs: this.requestOptions(rule, ctx).timeout, upstream: t.upstream, message });
      this.attempt(id, ctx, { answer: "fate_unknown", outcome: "uncertain", text: `${happened}: whether ${t.upstreamName} took effect is unknown` });
      return withMeta(
        textResult(`the ${t.name} call's fate is unknown (${message}): Reconcile holds operation ${id} as uncertain; do not repeat it until a reviewer has reconciled it`, true),
        { operation_id: id, outcome: "uncertain", reason: `no receipt recorded: ${message}`, retry: metaAtAnswer(id, "accepted", kind, null).retry, link: this.link(id) },
      );
    }
    const text = textOf(result);
    const raw = result.structuredContent !== undefined ? { text, structuredContent: result.structuredContent } : { text };
    const receiptId = rule.receipt_id_from && result.structuredContent ? resultId(result.structuredContent, rule.receipt_id_from) : null;
    const status = result.isError ? "rejected" : "accepted";
    await this.record({
      operation_id: id,
      receipt: { status, observed_at: new Date(this.now()).toISOString(), ...(receiptId ? { receipt_id: receiptId } : {}), raw },
    });
    if (status === "accepted" && rule.await_verdict) {
      const answer = verdictAnswer(result, await this.verdict(id, rule.await_verdict, kind, ctx));
      const said = (answer.content ?? []).find((c): c is { type: "text"; text: string } => c.type === "text" && c.text.startsWith("Reconcile: "));
      const meta = answer._meta?.[OUTCOME_META] as OutcomeMeta;
      this.attempt(id, ctx, { answer: "verdict", outcome: meta.outcome, text: said?.text ?? `Reconcile: ${meta.outcome}` });
      return answer;
    }
    return withMeta(result, metaAtAnswer(id, status, kind, this.link(id)));
  }

  /** Reconcile's verdict on an accepted call, waiting up to `ms` for a decisive one (a long poll on the operation). */
  private async verdict(id: string, ms: number, kind: CallKind, ctx: CallContext): Promise<OutcomeMeta> {
    const read = await this.rc.readOperation(id, { waitMs: ms, signal: ctx.signal });
    if (read.kind === "found") return metaOf(read.body as OperationView, id, this.config.reconcile.url);
    const why = read.kind === "unreachable" ? `Reconcile could not be reached: ${read.error}` : read.kind === "refused" ? `Reconcile refused to say: ${read.status} ${read.code}` : "Reconcile has not received it yet";
    return { ...metaAtAnswer(id, "accepted", kind, this.link(id)), reason: why };
  }

  /** What the agent was told this time, on the operation's record (in the background; never delays the answer). */
  private attempt(id: string, ctx: CallContext, a: Omit<AttemptFields, "at" | "session" | "client">): void {
    const client = ctx.client?.name ? { name: ctx.client.name.slice(0, 200), ...(ctx.client.version ? { version: ctx.client.version.slice(0, 100) } : {}) } : undefined;
    void this.rc.recordAttempt(id, { ...a, text: a.text.slice(0, 4000), at: new Date(this.now()).toISOString(), session: ctx.sessionId.slice(0, 200), ...(client ? { client } : {}) }).catch(() => undefined);
  }

  private async record(record: OperationRecord): Promise<void> {
    this.journal.append(record);
    await this.rc.record(record);
  }
}
