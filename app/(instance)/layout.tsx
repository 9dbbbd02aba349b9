import { Providers } from "@/app/providers";
import { redirect } from "next/navigation";
import { AppShell } from "@/components/shell/app-shell";
import { currentUser, pendingPasswordChange, PASSWORD_CHANGE_PATH } from "@/lib/auth/session";
import { projectsOf, standingIn } from "@/lib/store/people/projects";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";

/** The instance's own pages (one's account, users, projects): no project's, open to anyone signed in (each page checks more). */
export default async function InstanceLayout({ children }: { children: React.ReactNode }) {
  const me = await currentUser();
  if (!me && (await pendingPasswordChange())) redirect(PASSWORD_CHANGE_PATH);
  if (!me) redirect("/login");
  const [projects, { instanceAdmin }] = await Promise.all([projectsOf(me.userId), standingIn(me.userId, DEFAULT_PROJECT)]);
  const nav = [
    ...projects.slice(0, 1).map((p) => ({ href: `/p/${p.slug}`, label: `Back to ${p.name}` })),
    ...(instanceAdmin ? [{ href: "/settings/users", label: "Users" }, { href: "/settings/projects", label: "Projects" }, { href: "/settings/security", label: "Security log" }] : []),
  ];
  return (
    <AppShell email={me.email} standing={instanceAdmin ? "instance admin" : "member"} project={null} projects={projects} nav={nav} instanceAdmin={instanceAdmin}>
      <Providers>{children}</Providers>
    </AppShell>
  );
}
