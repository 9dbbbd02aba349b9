import Link from "next/link";
import { Providers } from "@/app/providers";
import { CollapsibleMenu } from "@/components/shell/menu";
import { NavLink } from "@/components/shell/nav-link";
import { logoutAction } from "@/lib/actions/auth";
import { can } from "@/lib/domain/permissions";
import { requirePage } from "@/lib/auth/session";

export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const me = await requirePage();
  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:rounded focus:bg-white focus:px-3 focus:py-2 dark:focus:bg-slate-900">
        Skip to content
      </a>
      <header className="border-b border-slate-200 dark:border-slate-800">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-5 gap-y-2 px-4 py-3">
          <Link href="/" className="font-semibold tracking-tight">
            Reconcile
          </Link>
          <CollapsibleMenu>
            <nav aria-label="Main" className="flex flex-col gap-1 sm:flex-1 sm:flex-row sm:flex-wrap">
              <NavLink href="/">Overview</NavLink>
              <NavLink href="/operations">Operations</NavLink>
              <NavLink href="/review">Review</NavLink>
              <NavLink href="/trajectories">Trajectories</NavLink>
              <NavLink href="/metrics">Metrics</NavLink>
              <NavLink href="/audit">Audit</NavLink>
              {can(me, "users:manage") ? <NavLink href="/settings/users">Users</NavLink> : null}
              {can(me, "verifiers:manage") ? <NavLink href="/settings/verifiers">Verifiers</NavLink> : null}
              {can(me, "webhooks:manage") ? <NavLink href="/settings/webhooks">Webhooks</NavLink> : null}
              <NavLink href="/settings/tokens">API tokens</NavLink>
            </nav>
            <div className="flex flex-wrap items-center gap-3 text-sm">
              {/* A long address is cut short on a wide screen, so the header stays one line; the title has it whole. */}
              <Link href="/settings/account" className="min-w-0 text-slate-700 underline-offset-4 hover:underline dark:text-slate-300" title={`${me.email} (${me.role}): your account, change your password`}>
                <span className="inline-block max-w-[11rem] truncate align-bottom">{me.email}</span> · <span className="font-medium">{me.role}</span>
              </Link>
              <form action={logoutAction}>
                <button type="submit" className="rounded-md px-2 py-1 text-slate-700 underline-offset-4 hover:underline dark:text-slate-300">
                  Sign out
                </button>
              </form>
            </div>
          </CollapsibleMenu>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-7xl px-4 py-8">
        <Providers>{children}</Providers>
      </main>
    </div>
  );
}
