import { Providers } from "@/app/providers";
import { AppShell } from "@/components/shell/app-shell";
import { can } from "@/lib/domain/permissions";
import { projectPath } from "@/lib/domain/projects";
import { requirePage } from "@/lib/auth/session";
import { projectsOf } from "@/lib/store/people/projects";

/** A project's pages (`/p/{slug}/…`): its frame, with the pages this user may open in it. */
export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const me = await requirePage();
  const projects = await projectsOf(me.userId);
  const at = (path: string) => projectPath(me.project.slug, path);
  const nav = [
    { href: at("/"), label: "Overview", exact: true },
    { href: at("/operations"), label: "Operations" },
    { href: at("/review"), label: "Review" },
    { href: at("/trajectories"), label: "Trajectories" },
    { href: at("/metrics"), label: "Metrics" },
    { href: at("/audit"), label: "Audit" },
    ...(can(me, "members:manage") ? [{ href: at("/settings/members"), label: "Members" }] : []),
    ...(can(me, "verifiers:manage") ? [{ href: at("/settings/verifiers"), label: "Verifiers" }] : []),
    ...(can(me, "webhooks:manage") ? [{ href: at("/settings/webhooks"), label: "Webhooks" }] : []),
    { href: at("/settings/tokens"), label: "API tokens" },
  ];
  return (
    <AppShell
      email={me.email}
      standing={me.role}
      project={{ slug: me.project.slug, name: me.project.name, role: me.role }}
      projects={projects.map((p) => ({ slug: p.slug, name: p.name, role: p.role }))}
      nav={nav}
      instanceAdmin={me.instanceAdmin}
    >
      <Providers>{children}</Providers>
    </AppShell>
  );
}
