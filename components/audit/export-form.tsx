"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import { useRef, useState } from "react";
import { Button, Field, Input, Notice, Select } from "@/components/ui/form";
import { exportRecordCounter } from "@/lib/domain/audit-count";
import { dayOrInstant } from "@/lib/domain/time";
import { AUDIT_FORMATS, type AuditFormat } from "@/lib/domain/audit-format";

/**
 * Downloads an export through fetch so that progress can be shown (records so far of the
 * chain's size) while the server streams it; the file is saved when complete. Records are
 * counted as they arrive, checkpoints left out: an export that matches no record (an unknown
 * operation, say) would hold only the signed checkpoints, so none is saved and the page says
 * "0 records match" instead.
 */
export function AuditExportForm({ total }: { total: number }) {
  const [progress, setProgress] = useState<{ records: number; bytes: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);

  async function download(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setError(null);
    setDone(null);
    const form = new FormData(e.currentTarget);
    const q = new URLSearchParams();
    // A plain day in a date field is that day's start in UTC.
    for (const [k, v] of form.entries()) if (typeof v === "string" && v.trim()) q.set(k, k === "since" || k === "until" ? dayOrInstant(v.trim()) : v.trim());
    abort.current = new AbortController();
    setProgress({ records: 0, bytes: 0 });
    try {
      const res = await fetch(inCurrentProject(`/api/v1/audit/export?${q}`), { signal: abort.current.signal });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        const message = body?.error?.message ?? `the server answered ${res.status}`;
        // 429: this user already has an export or a verification running (one at a time).
        throw new Error(res.status === 429 ? `Not started: ${message}.` : message);
      }
      const format = (AUDIT_FORMATS as readonly string[]).includes(q.get("format") ?? "") ? (q.get("format") as AuditFormat) : "ndjson";
      const counter = exportRecordCounter(format);
      const reader = res.body.getReader();
      const parts: Uint8Array[] = [];
      let bytes = 0;
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        parts.push(value);
        bytes += value.byteLength;
        setProgress({ records: counter.push(value), bytes });
      }
      const records = counter.finish();
      if (records === 0) {
        setDone("0 records match: nothing to download.");
        return;
      }
      const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? `reconcile-audit.${q.get("format") ?? "ndjson"}`;
      const url = URL.createObjectURL(new Blob(parts as BlobPart[], { type: res.headers.get("content-type") ?? "application/octet-stream" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setDone(`Saved ${name}: ${records.toLocaleString()} record${records === 1 ? "" : "s"} (${(bytes / 1024).toFixed(0)} KiB).`);
    } catch (err) {
      if ((err as Error).name !== "AbortError") setError((err as Error).message);
    } finally {
      setProgress(null);
      abort.current = null;
    }
  }

  return (
    <form onSubmit={download} className="space-y-4" aria-label="Export the audit trail">
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
        <Field label="Format" htmlFor="format">
          <Select id="format" name="format" defaultValue="ndjson" className="w-full py-2">
            <option value="ndjson">NDJSON (one record a line; verifiable)</option>
            <option value="csv">CSV (spreadsheets)</option>
            <option value="json">JSON (one document)</option>
          </Select>
        </Field>
        <Field label="Recorded since" htmlFor="since" hint="A day (2026-11-01, from its start in UTC) or an RFC 3339 time, e.g. 2026-11-01T09:30:00Z">
          <Input id="since" name="since" placeholder="any time" />
        </Field>
        <Field label="Recorded before" htmlFor="until">
          <Input id="until" name="until" placeholder="now" />
        </Field>
        <Field label="Operation" htmlFor="operation_id">
          <Input id="operation_id" name="operation_id" placeholder="all operations" />
        </Field>
        <Field label="Trajectory" htmlFor="trajectory_id">
          <Input id="trajectory_id" name="trajectory_id" placeholder="all trajectories" />
        </Field>
      </div>
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={progress !== null}>
          {progress ? "Exporting…" : "Export"}
        </Button>
        {progress ? (
          <>
            <span role="status" className="text-sm tabular-nums">
              {progress.records.toLocaleString()} of about {total.toLocaleString()} records · {(progress.bytes / 1024).toFixed(0)} KiB
            </span>
            <Button type="button" variant="secondary" onClick={() => abort.current?.abort()}>
              Cancel
            </Button>
          </>
        ) : null}
      </div>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {done ? <Notice kind="ok">{done}</Notice> : null}
    </form>
  );
}
