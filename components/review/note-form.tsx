"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { MAX_COMMENT_LENGTH } from "@/lib/domain/comments";
import { Button, Field, Notice } from "@/components/ui/form";

/** Leave a note on an operation (Ctrl+Enter or ⌘+Enter sends it). A note changes no outcome. */
export function NoteForm({ operationId }: { operationId: string }) {
  const router = useRouter();
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState(false);
  const [sending, setSending] = useState(false);
  const [, startTransition] = useTransition();

  async function send() {
    if (!text.trim() || sending) return;
    setSending(true);
    setError(null);
    setSent(false);
    try {
      const res = await fetch(inCurrentProject(`/api/v1/operations/${encodeURIComponent(operationId)}/comments`), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
      if (res.status === 201) {
        setText("");
        setSent(true);
        startTransition(() => router.refresh());
        return;
      }
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      setError(body?.error?.message ?? `the server answered ${res.status}`);
    } catch {
      setError("the server could not be reached: your note is still here, send it again");
    } finally {
      setSending(false);
    }
  }

  return (
    <form
      className="mt-4 space-y-2"
      aria-label="Leave a note for whoever picks this up"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <Field label="Add a note" htmlFor="note-text" hint={`For whoever picks this up next: what you checked, who you asked, what is pending. Notes are kept for good and change no outcome. ${text.length.toLocaleString("en")} of ${MAX_COMMENT_LENGTH.toLocaleString("en")} characters; Ctrl+Enter sends.`}>
        <textarea
          id="note-text"
          value={text}
          maxLength={MAX_COMMENT_LENGTH}
          rows={2}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void send();
            }
          }}
          className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm dark:border-slate-700 dark:bg-slate-900"
        />
      </Field>
      {error ? <Notice kind="error">{error.charAt(0).toUpperCase() + error.slice(1)}.</Notice> : null}
      {sent ? (
        <p role="status" className="text-sm text-emerald-800 dark:text-emerald-300">
          Note added.
        </p>
      ) : null}
      <Button type="submit" variant="secondary" disabled={sending || !text.trim()}>
        {sending ? "Adding…" : "Add note"}
      </Button>
    </form>
  );
}
