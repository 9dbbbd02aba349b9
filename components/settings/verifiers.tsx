"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import { useRouter } from "next/navigation";
import { useId, useState, type ReactNode } from "react";
import { Button, Field, Input, Notice } from "@/components/ui/form";
import { TableScroll } from "@/components/ui/table-scroll";

type Definition = Record<string, unknown> & { name: string; tool: string };
export type VerifierRow = { name: string; version: number; versions: number; tool: string; enabled: boolean; definition: Definition; created_at: string; created_by: string };
type ApiError = { code: string; message: string; details?: { path: string; message: string }[] };
type DryRun = {
  request: { method: string; url: string; headers: Record<string, string>; body?: string } | null;
  response: { status: number; content_type: string | null; excerpt: string; truncated: boolean; bytes: number; redirects: string[]; ms: number } | null;
  error: { code: string; message: string } | null;
  read: Record<string, unknown> & { status: string };
};

/**
 * The editor's example. It starts disabled: saved as it is, it would read api.example.com for
 * every social.publish receipt with a token this server may not have. Run a dry run, then Enable.
 */
const TEMPLATE = {
  name: "post-exists",
  tool: "social.publish",
  enabled: false,
  request: { method: "GET", url: "https://api.example.com/2/tweets/{receipt.receipt_id}", headers: { Authorization: "Bearer {env.X_READ_TOKEN}" } },
  expect: [
    { when: { status: 404 }, read: "absent" },
    // A match shows the content it compared: the intent's fingerprint is held against this one (a match without it is not a verification).
    { when: { status: 200, json: { "/data/text": "{intent.params.text}" } }, read: "match", evidence: { object_id: "/data/id", fingerprint: "/data/sha256" } },
    { when: { status: 200 }, read: "mismatch" },
  ],
  window: { checks_at: ["5s", "30s", "2m", "10m"], pending_until: "10m" },
  allow_hosts: ["api.example.com"],
};

const when = (t: string) => t.replace("T", " ").slice(0, 16) + " UTC";

async function send(path: string, body?: unknown, method?: string): Promise<{ ok: boolean; body: any }> {
  const res = await fetch(inCurrentProject(path), {
    method: method ?? (body === undefined ? "GET" : "POST"),
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { error: { code: "internal", message: `the server answered ${res.status}` } };
  }
  return { ok: res.ok, body: parsed };
}

function Problems({ error }: { error: ApiError }) {
  return (
    <div role="alert" className="rounded-md border border-rose-300 bg-rose-50 px-3 py-2 text-sm text-rose-900 dark:border-rose-800 dark:bg-rose-950 dark:text-rose-200">
      {error.details?.length ? (
        <>
          <p className="font-medium">The definition was not saved:</p>
          <ul className="mt-1 list-disc space-y-0.5 pl-5">
            {/* The message's sentences, one a problem (details keep the schema's own wording, for programs). */}
            {error.message.split("; ").map((sentence, i) => (
              <li key={i}>{sentence}</li>
            ))}
          </ul>
        </>
      ) : (
        <p>{error.message}</p>
      )}
    </div>
  );
}

/** The list of verifiers, the editor (every save a new version) and the dry run. */
export function VerifiersAdmin({ verifiers, recent }: { verifiers: VerifierRow[]; recent: { id: string; tool: string | null }[] }) {
  const router = useRouter();
  const [editing, setEditing] = useState<{ name: string | null; text: string } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const open = (v: VerifierRow | null) => {
    setError(null);
    setSaved(null);
    // `enabled` is changed with Disable/Enable; the editor shows the rest.
    const definition = v ? Object.fromEntries(Object.entries(v.definition).filter(([k, val]) => !(k === "enabled" && val === true))) : TEMPLATE;
    setEditing({ name: v?.name ?? null, text: JSON.stringify(definition, null, 2) });
  };

  const parse = (): Definition | null => {
    try {
      const value = JSON.parse(editing!.text) as Definition;
      if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("the definition must be a JSON object");
      return value;
    } catch (e) {
      setError({ code: "malformed_json", message: `Not valid JSON: ${(e as Error).message}` });
      return null;
    }
  };

  const save = async () => {
    const def = parse();
    if (!def) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    const r = await send("/api/v1/verifiers", def);
    setBusy(false);
    if (!r.ok) return setError(r.body.error);
    const warned = ((r.body.warnings ?? []) as string[]).map((w) => ` Warning: ${w}.`).join("");
    setSaved((r.body.created ? `Saved ${r.body.verifier.name} as version ${r.body.verifier.version}.` : `Nothing changed: version ${r.body.verifier.version} is the same.`) + warned);
    setEditing({ name: r.body.verifier.name, text: editing!.text });
    router.refresh();
  };

  const toggle = async (v: VerifierRow) => {
    setBusy(true);
    const r = v.enabled ? await send(`/api/v1/verifiers/${encodeURIComponent(v.name)}`, undefined, "DELETE") : await send("/api/v1/verifiers", { ...v.definition, enabled: true });
    setBusy(false);
    if (!r.ok) return setError(r.body.error);
    setSaved(`${v.name} is ${v.enabled ? "disabled" : "enabled"} (version ${r.body.verifier.version}).`);
    router.refresh();
  };

  return (
    <div className="space-y-8">
      <section aria-labelledby="verifier-list">
        <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
          <h2 id="verifier-list" className="font-semibold">
            All verifiers
          </h2>
          <Button type="button" onClick={() => open(null)}>
            New verifier
          </Button>
        </div>
        {saved && !editing ? <Notice kind="ok">{saved}</Notice> : null}
        {verifiers.length === 0 ? (
          <div className="rounded-xl border border-dashed border-slate-300 p-6 text-slate-700 dark:border-slate-700 dark:text-slate-300">
            <p className="font-medium">No verifiers yet.</p>
            <p className="mt-1 text-sm">
              Without one, an operation stays uncertain until someone sends a canonical read. Create a verifier for a tool, and
              Reconcile reads the resource back itself after every receipt of that tool.
            </p>
          </div>
        ) : (
          <>
          {/* On a phone: one card per verifier. */}
          <ul className="mt-3 space-y-3 sm:hidden" aria-label="Verifiers, latest version of each">
            {verifiers.map((v) => {
              const w = v.definition.window as { checks_at: string[]; pending_until: string };
              return (
                <li key={v.name} className="rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800">
                  <p className="font-mono font-medium break-all">{v.name}</p>
                  <p className="mt-1">
                    tool <span className="font-mono">{v.tool}</span> · version {v.version}
                    {v.versions > 1 ? ` of ${v.versions}` : ""} · {v.enabled ? "enabled" : "disabled"}
                  </p>
                  <p className="mt-1 text-slate-700 dark:text-slate-300">
                    checks at {w.checks_at.join(", ")}; open for {w.pending_until}
                  </p>
                  <div className="mt-2 flex flex-wrap gap-2">
                    <Button type="button" variant="secondary" onClick={() => open(v)} aria-label={`Edit ${v.name}`}>
                      Edit
                    </Button>
                    <Button type="button" variant={v.enabled ? "danger" : "secondary"} disabled={busy} onClick={() => toggle(v)} aria-label={`${v.enabled ? "Disable" : "Enable"} ${v.name}`}>
                      {v.enabled ? "Disable" : "Enable"}
                    </Button>
                  </div>
                </li>
              );
            })}
          </ul>
          <TableScroll className="hidden sm:block">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">Verifiers, latest version of each</caption>
              <thead>
                <tr className="text-slate-600 dark:text-slate-400">
                  <th className="py-2 pr-4 font-medium">Name</th>
                  <th className="py-2 pr-4 font-medium">Tool</th>
                  <th className="py-2 pr-4 font-medium">Version</th>
                  <th className="py-2 pr-4 font-medium">Status</th>
                  <th className="py-2 pr-4 font-medium">Window</th>
                  <th className="py-2 pr-4 font-medium">Saved</th>
                  <th className="py-2 font-medium">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {verifiers.map((v) => {
                  const w = v.definition.window as { checks_at: string[]; pending_until: string };
                  return (
                    <tr key={v.name} className="border-t border-slate-200 align-top dark:border-slate-800">
                      <td className="py-2 pr-4 font-mono">{v.name}</td>
                      <td className="py-2 pr-4 font-mono">{v.tool}</td>
                      <td className="py-2 pr-4">
                        {v.version}
                        {v.versions > 1 ? <span className="text-slate-600 dark:text-slate-400"> of {v.versions}</span> : null}
                      </td>
                      <td className="py-2 pr-4">{v.enabled ? "enabled" : <span className="text-slate-600 dark:text-slate-400">disabled</span>}</td>
                      <td className="py-2 pr-4">
                        checks at {w.checks_at.join(", ")}; open for {w.pending_until}
                      </td>
                      <td className="py-2 pr-4">
                        {when(v.created_at)} by {v.created_by}
                      </td>
                      <td className="py-2">
                        <div className="flex flex-wrap gap-2">
                          <Button type="button" variant="secondary" onClick={() => open(v)} aria-label={`Edit ${v.name}`}>
                            Edit
                          </Button>
                          <Button type="button" variant={v.enabled ? "danger" : "secondary"} disabled={busy} onClick={() => toggle(v)} aria-label={`${v.enabled ? "Disable" : "Enable"} ${v.name}`}>
                            {v.enabled ? "Disable" : "Enable"}
                          </Button>
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableScroll>
          </>
        )}
      </section>

      {editing ? (
        <section aria-labelledby="verifier-editor" className="space-y-4 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="verifier-editor" className="font-semibold">
            {editing.name ? `Edit ${editing.name} (saved as a new version)` : "New verifier"}
          </h2>
          <Field
            label="Definition (JSON)"
            htmlFor="verifier-definition"
            hint="A new verifier saved with enabled: false does nothing until you Enable it: try it with a dry run first. Templates: {intent.params.x}, {receipt.receipt_id}, {operation_id}, {tool.name}; secrets {env.NAME}. Expect rules are tried in order; JSON pointers as /data/id. Ctrl+Enter saves."
          >
            <textarea
              id="verifier-definition"
              value={editing.text}
              spellCheck={false}
              rows={24}
              onChange={(e) => setEditing({ ...editing, text: e.target.value })}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                  e.preventDefault();
                  void save();
                }
              }}
              aria-invalid={error ? true : undefined}
              className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-xs shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/30 dark:border-slate-700 dark:bg-slate-900"
            />
          </Field>
          <div className="flex flex-wrap gap-2">
            <Button type="button" onClick={save} disabled={busy}>
              Save as new version
            </Button>
            <Button type="button" variant="secondary" onClick={() => setEditing(null)}>
              Close
            </Button>
          </div>
          {error ? <Problems error={error} /> : null}
          {saved ? <Notice kind="ok">{saved}</Notice> : null}
          <DryRunPanel text={editing.text} recent={recent} />
        </section>
      ) : null}
    </div>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid gap-1 sm:grid-cols-[10rem_1fr]">
      <dt className="text-slate-600 dark:text-slate-400">{label}</dt>
      <dd className="min-w-0 break-words">{children}</dd>
    </div>
  );
}

/** "Test this verifier against operation X": the draft in the editor, nothing recorded. */
function DryRunPanel({ text, recent }: { text: string; recent: { id: string; tool: string | null }[] }) {
  const listId = useId();
  const [operationId, setOperationId] = useState("");
  const [result, setResult] = useState<DryRun | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    setError(null);
    setResult(null);
    let def: Definition;
    try {
      def = JSON.parse(text) as Definition;
    } catch (e) {
      return setError({ code: "malformed_json", message: `Not valid JSON: ${(e as Error).message}` });
    }
    const name = typeof def?.name === "string" && def.name ? def.name : "draft";
    setBusy(true);
    const r = await send(`/api/v1/verifiers/${encodeURIComponent(name)}/dry-run`, { operation_id: operationId.trim(), definition: def });
    setBusy(false);
    if (!r.ok) return setError(r.body.error);
    setResult(r.body as DryRun);
  };

  return (
    <div className="space-y-3 border-t border-slate-200 pt-4 dark:border-slate-800">
      <h3 className="font-semibold">Dry run</h3>
      <form
        className="flex flex-wrap items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <div className="min-w-64 flex-1">
          <Field label="Operation id" htmlFor="dry-run-operation" hint="Reads the resource for this operation now, with the draft above. Records nothing.">
            <Input id="dry-run-operation" list={listId} value={operationId} onChange={(e) => setOperationId(e.target.value)} required placeholder="op-…" />
          </Field>
          <datalist id={listId}>
            {recent.map((o) => (
              <option key={o.id} value={o.id}>
                {o.tool ?? ""}
              </option>
            ))}
          </datalist>
        </div>
        <Button type="submit" variant="secondary" disabled={busy || !operationId.trim()}>
          {busy ? "Reading…" : "Run dry run"}
        </Button>
      </form>
      {error ? <Problems error={error} /> : null}
      {result ? (
        <dl className="space-y-2 text-sm" aria-label="Dry run result" data-testid="dry-run-result">
          <Row label="request">
            {result.request ? (
              <code className="font-mono text-xs break-all">
                {result.request.method} {result.request.url}
                {Object.entries(result.request.headers ?? {}).map(([k, v]) => (
                  <span key={k} className="block">
                    {k}: {v}
                  </span>
                ))}
              </code>
            ) : (
              "not sent: the request could not be filled in"
            )}
          </Row>
          {result.error ? (
            <Row label="refused">
              <span role="alert" className="text-rose-800 dark:text-rose-300">
                <code className="font-mono">{result.error.code}</code>: {result.error.message}
              </span>
            </Row>
          ) : null}
          {result.response ? (
            <Row label="response">
              <p>
                HTTP {result.response.status} · {result.response.ms} ms · {result.response.bytes.toLocaleString("en")} bytes
                {result.response.redirects.length ? ` · redirected to ${result.response.redirects.join(", ")}` : ""}
              </p>
              <pre className="mt-1 max-h-48 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs whitespace-pre-wrap dark:bg-slate-900">
                {result.response.excerpt || "(empty)"}
                {result.response.truncated ? "\n… (cut)" : ""}
              </pre>
            </Row>
          ) : null}
          <Row label="would record">
            <span className="font-medium">{result.read.status}</span>
            {(result.read.verifier as { error?: string } | undefined)?.error ? ` — ${(result.read.verifier as { error: string }).error}` : ""}
            {result.read.evidence ? <span className="ml-1 font-mono text-xs">evidence {JSON.stringify(result.read.evidence)}</span> : null}
          </Row>
        </dl>
      ) : null}
    </div>
  );
}
