import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { ChangePasswordForm } from "@/components/settings/account";
import { currentUser } from "@/lib/auth/session";
import { projectsOf } from "@/lib/store/people/projects";

export const metadata: Metadata = { title: "Your account" };

export default async function AccountPage() {
  const me = await currentUser();
  if (!me) redirect("/login?from=%2Fsettings%2Faccount");
  const projects = await projectsOf(me.userId);
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Your account</h1>
        <p className="mt-1 text-slate-700 dark:text-slate-300">
          Signed in as <span className="font-medium">{me.email}</span>. A project&apos;s admins choose your role in it.
        </p>
      </div>
      <section aria-labelledby="projects" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="projects" className="mb-3 font-semibold">
          Your projects
        </h2>
        {projects.length ? (
          <ul className="space-y-1 text-sm">
            {projects.map((p) => (
              <li key={p.slug}>
                <a href={`/p/${p.slug}`} className="text-indigo-700 underline underline-offset-2 dark:text-indigo-300">
                  {p.name}
                </a>{" "}
                <span className="text-slate-600 dark:text-slate-400">({p.role})</span>
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-slate-700 dark:text-slate-300">You are in no project yet: ask an admin to add you to one.</p>
        )}
      </section>
      <section aria-labelledby="password" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="password" className="mb-3 font-semibold">
          Change your password
        </h2>
        <ChangePasswordForm email={me.email} />
      </section>
    </div>
  );
}
