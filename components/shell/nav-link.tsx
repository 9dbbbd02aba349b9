"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

/** A link of the main navigation; `exact`: current only on that very page (a project's overview, whose path starts every other). */
export function NavLink({ href, exact = false, children }: { href: string; exact?: boolean; children: React.ReactNode }) {
  const path = usePathname();
  const active = href === "/" || exact ? path === href : path === href || path.startsWith(`${href}/`);
  return (
    <Link
      href={href}
      aria-current={active ? "page" : undefined}
      className={`whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium lg:px-1.5 ${active ? "bg-slate-200 text-slate-900 dark:bg-slate-800 dark:text-white" : "text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-900"}`}
    >
      {children}
    </Link>
  );
}
