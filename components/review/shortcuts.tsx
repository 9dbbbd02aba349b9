"use client";

import { useEffect, useRef, useState } from "react";

export type Shortcut = { key: string; label: string; run: () => void; available?: boolean };

/** Whether a key press belongs to something the person is typing into, or carries a modifier. */
function ignored(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return true;
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  if (t.isContentEditable) return true;
  const tag = t.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    const type = (t as HTMLInputElement).type;
    return !["checkbox", "radio", "button", "submit", "reset"].includes(type);
  }
  return false;
}

/**
 * Single-key shortcuts for a page, with `?` opening a dialog that lists them (Escape closes it,
 * as every native dialog does). Nothing fires while typing in a field or with Ctrl, Alt or Meta,
 * and a shortcut whose button the person may not use now (`available: false`) does nothing.
 */
export function Shortcuts({ keys, title }: { keys: Shortcut[]; title: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const latest = useRef(keys);
  const [, setOpen] = useState(false);
  useEffect(() => {
    latest.current = keys;
  });
  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (ignored(e)) return;
      if (dialog.current?.open) return;
      if (e.key === "?") {
        e.preventDefault();
        dialog.current?.showModal();
        setOpen(true);
        return;
      }
      const hit = latest.current.find((k) => k.key === e.key);
      if (!hit || hit.available === false) return;
      e.preventDefault();
      hit.run();
    }
    window.addEventListener("keydown", onKey);
    // Says that the keys work now (after hydration): tests wait for it before pressing any.
    document.body.dataset.keys = "on";
    return () => {
      window.removeEventListener("keydown", onKey);
      delete document.body.dataset.keys;
    };
  }, []);
  return (
    <>
      <button
        type="button"
        onClick={() => dialog.current?.showModal()}
        className="rounded-md border border-slate-300 px-2 py-1 text-xs text-slate-700 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 dark:border-slate-700 dark:text-slate-300 dark:hover:bg-slate-800"
        aria-keyshortcuts="?"
      >
        Keyboard shortcuts <kbd className="font-mono">?</kbd>
      </button>
      <dialog
        ref={dialog}
        aria-labelledby="shortcuts-title"
        onClose={() => setOpen(false)}
        className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-xl border border-slate-300 bg-white p-4 text-slate-900 backdrop:bg-slate-900/50 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
      >
        <h2 id="shortcuts-title" className="font-semibold">
          {title}
        </h2>
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">Not while typing in a field. Escape closes this.</p>
        <table className="mt-3 w-full text-left text-sm">
          <caption className="sr-only">Keys and what they do</caption>
          <thead>
            <tr>
              <th scope="col" className="py-1 pr-3 font-medium">Key</th>
              <th scope="col" className="py-1 font-medium">Does</th>
            </tr>
          </thead>
          <tbody>
            {[...keys, { key: "?", label: "Show this list" }].map((k) => (
              <tr key={k.key} className="border-t border-slate-200 dark:border-slate-800">
                <td className="py-1 pr-3">
                  <kbd className="rounded border border-slate-300 px-1.5 font-mono dark:border-slate-600">{k.key}</kbd>
                </td>
                <td className="py-1">{k.label}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <form method="dialog" className="mt-3 text-right">
          <button type="submit" className="rounded-md bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600">
            Close
          </button>
        </form>
      </dialog>
    </>
  );
}
