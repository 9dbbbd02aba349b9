"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { Button, Field, Input, Notice } from "@/components/ui/form";
import { When } from "@/components/ui/when";

export type SecretRow = { name: string; created_at: string; updated_at: string; updated_by: string; used_by: string[] };

async function send(path: string, method: "PUT" | "DELETE", body?: unknown): Promise<{ ok: boolean; body: any }> {
  let res: Response;
  try {
    res = await fetch(inCurrentProject(path), { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    return { ok: false, body: { error: { message: "The server could not be reached; nothing was changed. Try again." } } };
  }
  try {
    return { ok: res.ok, body: await res.json() };
  } catch {
    return { ok: false, body: { error: { message: `the server answered ${res.status}` } } };
  }
}

/**
 * Verifier secrets (`{secret.NAME}`): stored encrypted, never shown again. Add or replace one
 * (name and value; Enter saves), delete one (a second click confirms). Each row says which
 * enabled verifiers send it; names verifiers send that are not stored are listed above.
 */
export function VerifierSecrets({ secrets, missing, now }: { secrets: SecretRow[]; missing: { name: string; used_by: string[] }[]; now: number }) {
  const router = useRouter();
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const valueRef = useRef<HTMLInputElement>(null);
  const nameRef = useRef<HTMLInputElement>(null);
  const existing = secrets.some((s) => s.name === name.trim());

  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    const r = await send(`/api/v1/verifier-secrets/${encodeURIComponent(name.trim())}`, "PUT", { value });
    setBusy(false);
    if (!r.ok) return setError(r.body.error?.message ?? "The secret was not saved.");
    setDone(r.body.created ? `Stored ${r.body.secret.name}. Verifiers send it as {secret.${r.body.secret.name}}.` : `Replaced the value of ${r.body.secret.name}.`);
    setName("");
    setValue("");
    router.refresh();
  };

  const remove = async (secret: string) => {
    if (confirming !== secret) return setConfirming(secret);
    setBusy(true);
    setError(null);
    setDone(null);
    const r = await send(`/api/v1/verifier-secrets/${encodeURIComponent(secret)}`, "DELETE");
    setBusy(false);
    setConfirming(null);
    if (!r.ok) return setError(r.body.error?.message ?? "The secret was not deleted.");
    setDone(`Deleted ${secret}.`);
    nameRef.current?.focus();
    router.refresh();
  };

  return (
    <section aria-labelledby="verifier-secrets" className="space-y-3">
      <div>
        <h2 id="verifier-secrets" className="font-semibold">
          Secrets
        </h2>
        <p className="mt-1 max-w-3xl text-sm text-slate-700 dark:text-slate-300">
          A credential a verifier sends without it being in the server&apos;s environment: write it{" "}
          <code className="font-mono">{"{secret.NAME}"}</code> in the request. Stored encrypted; its value is never shown again, only
          replaced or deleted.
        </p>
      </div>
      {missing.length ? (
        <Notice kind="warning">
          Not stored, but sent by enabled verifiers (their checks record unavailable until it is):{" "}
          {missing.map((m, i) => (
            <span key={m.name}>
              {i ? "; " : ""}
              <code className="font-mono">{m.name}</code> by {m.used_by.join(", ")}
            </span>
          ))}
          .
        </Notice>
      ) : null}
      {secrets.length === 0 ? (
        <p className="rounded-xl border border-dashed border-slate-300 p-4 text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300">
          No secrets stored. Add one below, then send it from a verifier as <code className="font-mono">{"{secret.NAME}"}</code>.
        </p>
      ) : (
        <ul aria-label="Stored secrets" className="divide-y divide-slate-200 rounded-lg border border-slate-200 dark:divide-slate-800 dark:border-slate-800">
          {secrets.map((s) => (
            <li key={s.name} className="flex flex-wrap items-center justify-between gap-2 px-3 py-2 text-sm">
              <div className="min-w-0">
                <p className="font-mono font-medium break-all">{s.name}</p>
                <p className="text-slate-600 dark:text-slate-400">
                  set <When at={s.updated_at} now={now} /> by {s.updated_by} ·{" "}
                  {s.used_by.length ? `sent by ${s.used_by.join(", ")}` : "no enabled verifier sends it"}
                </p>
              </div>
              <div className="flex gap-2" onKeyDown={(e) => e.key === "Escape" && setConfirming(null)}>
                <Button
                  type="button"
                  variant="secondary"
                  onClick={() => {
                    setName(s.name);
                    setValue("");
                    valueRef.current?.focus();
                  }}
                  aria-label={`Replace ${s.name}`}
                >
                  Replace
                </Button>
                <Button
                  type="button"
                  variant="danger"
                  disabled={busy}
                  onClick={() => remove(s.name)}
                  onBlur={() => setConfirming((c) => (c === s.name ? null : c))}
                  aria-label={confirming === s.name ? `Confirm deleting ${s.name} (Escape cancels)` : `Delete ${s.name}`}
                >
                  {confirming === s.name ? "Confirm delete" : "Delete"}
                </Button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={save} aria-label="Store a secret" className="flex flex-wrap items-end gap-3">
        <Field label="Name" htmlFor="secret-name" hint="Letters, digits and _; sent as {secret.NAME}.">
          <Input id="secret-name" ref={nameRef} value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} autoComplete="off" spellCheck={false} className="w-64 font-mono" />
        </Field>
        <Field label="Value" htmlFor="secret-value" hint="8 or more printable ASCII characters; never shown again.">
          <Input id="secret-value" ref={valueRef} type="password" value={value} onChange={(e) => setValue(e.target.value)} required autoComplete="new-password" className="w-72" />
        </Field>
        <Button type="submit" disabled={busy || !name.trim() || !value}>
          {existing ? "Replace secret" : "Store secret"}
        </Button>
      </form>
      {existing ? <p className="text-sm text-amber-800 dark:text-amber-300">{name.trim()} is stored: saving replaces its value for every verifier that sends it.</p> : null}
      {/* Said next to the form, where the eyes and the focus are. */}
      {done ? <Notice kind="ok">{done}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
    </section>
  );
}
