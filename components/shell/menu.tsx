"use client";

import { useEffect, useRef, useState } from "react";

/**
 * The top menu on a narrow screen (below Tailwind's `sm`, 640 px): a "Menu" button shows or
 * hides the links and the account, so the first row of a page is not two screens down. On a
 * wider screen the button is not shown and the links always are: that needs no script.
 * Escape closes the open menu and gives the focus back to the button; following a link closes it.
 */
export function CollapsibleMenu({ children }: { children: React.ReactNode }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open]);
  return (
    <>
      <button
        ref={button}
        type="button"
        aria-expanded={open}
        aria-controls="main-menu"
        onClick={() => setOpen((o) => !o)}
        className="ml-auto inline-flex items-center gap-2 rounded-md border border-slate-300 px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 sm:hidden dark:border-slate-700 dark:text-slate-200 dark:hover:bg-slate-900"
      >
        <span aria-hidden="true">{open ? "✕" : "☰"}</span>
        Menu
      </button>
      <div
        id="main-menu"
        onClick={(e) => {
          if ((e.target as HTMLElement).closest("a")) setOpen(false);
        }}
        className={`${open ? "flex" : "hidden"} w-full flex-col gap-3 sm:flex sm:w-auto sm:flex-1 sm:flex-row sm:flex-wrap sm:items-center sm:gap-x-4 sm:gap-y-2`}
      >
        {children}
      </div>
    </>
  );
}
