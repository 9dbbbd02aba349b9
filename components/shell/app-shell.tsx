import Link from "next/link";
import { CollapsibleMenu } from "@/components/shell/menu";
import { NavLink } from "@/components/shell/nav-link";
import { ProjectBase } from "@/components/shell/project-base";
import { logoutAction } from "@/lib/actions/auth";

export type ShellProject = { slug: string; name: string; role: string };

/**
 * The frame of every signed-in page: the project switcher (the projects the user may open), the
 * current project's pages, the user's own settings, sign out. `project` is null on the
 * instance's pages (one's account, users, projects), which belong to no project.
 */
export function AppShell(props: {
  email: string;
  /** What the user is here: their role in the project, or "instance admin". */
  standing: string;
  project: ShellProject | null;
  projects: ShellProject[];
  nav: { href: string; label: string; exact?: boolean }[];
  instanceAdmin: boolean;
  children: React.ReactNode;
}) {
  const { project, projects } = props;
  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:rounded focus:bg-white focus:px-3 focus:py-2 dark:focus:bg-slate-900">
        Skip to content
      </a>
      <header className="border-b border-slate-200 dark:border-slate-800">
        <div className="mx-auto flex max-w-screen-2xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3">
          <a href={project ? `/p/${project.slug}` : "/"} className="font-semibold tracking-tight">
            Reconcile
          </a>
          <details className="relative text-sm">
            <summary className="cursor-pointer list-none rounded-md border border-slate-300 px-2 py-1 font-medium dark:border-slate-700" title="Switch project">
              <span className="sr-only">Project: </span>
              {project ? project.name : "Projects"} <span aria-hidden="true">▾</span>
            </summary>
            <div className="absolute left-0 z-20 mt-1 min-w-[14rem] rounded-md border border-slate-200 bg-white p-1 shadow-lg dark:border-slate-800 dark:bg-slate-950">
              <ul aria-label="Your projects">
                {projects.map((p) => (
                  <li key={p.slug}>
                    {/* A whole page load: the frame (its links, its role) is the other project's. */}
                    <a
                      href={`/p/${p.slug}`}
                      aria-current={p.slug === project?.slug ? "page" : undefined}
                      className="flex justify-between gap-3 rounded px-2 py-1.5 hover:bg-slate-100 aria-[current=page]:font-semibold dark:hover:bg-slate-900"
                    >
                      <span>{p.name}</span>
                      <span className="text-slate-500 dark:text-slate-400">{p.role}</span>
                    </a>
                  </li>
                ))}
              </ul>
              {props.instanceAdmin ? (
                <ul aria-label="This server" className="mt-1 border-t border-slate-200 pt-1 dark:border-slate-800">
                  <li>
                    <Link href="/settings/projects" className="block rounded px-2 py-1.5 text-indigo-700 hover:bg-slate-100 dark:text-indigo-300 dark:hover:bg-slate-900">
                      Manage projects
                    </Link>
                  </li>
                  <li>
                    <Link href="/settings/users" className="block rounded px-2 py-1.5 text-indigo-700 hover:bg-slate-100 dark:text-indigo-300 dark:hover:bg-slate-900">
                      Users
                    </Link>
                  </li>
                  <li>
                    <Link href="/settings/security" className="block rounded px-2 py-1.5 text-indigo-700 hover:bg-slate-100 dark:text-indigo-300 dark:hover:bg-slate-900">
                      Security log
                    </Link>
                  </li>
                </ul>
              ) : null}
            </div>
          </details>
          <CollapsibleMenu>
            <nav aria-label="Main" className="flex flex-col gap-1 sm:flex-1 sm:flex-row sm:flex-wrap">
              {props.nav.map((n) => (
                <NavLink key={n.href} href={n.href} exact={n.exact}>
                  {n.label}
                </NavLink>
              ))}
            </nav>
            <div className="flex flex-wrap items-center gap-3 text-sm">
              {/* A long address is cut short so the header stays one line; hovering or focusing the link shows it whole (and the title has it), and the role is never cut. */}
              <Link href="/settings/account" className="group inline-flex min-w-0 items-baseline gap-1 text-slate-700 underline-offset-4 hover:underline dark:text-slate-300" title={`${props.email} (${props.standing}): your account, change your password`}>
                <span className="inline-block max-w-[9rem] truncate align-bottom group-hover:max-w-none group-focus-visible:max-w-none">{props.email}</span>
                {" · "}
                <span className="shrink-0 whitespace-nowrap font-medium">{props.standing}</span>
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
      <main id="main" className="mx-auto max-w-screen-2xl px-4 py-8">
        <ProjectBase slug={project?.slug ?? null}>{props.children}</ProjectBase>
      </main>
    </div>
  );
}
