import type { Metadata } from "next";
import { NewProjectForm } from "@/components/settings/projects-admin";
import { requirePage } from "@/lib/auth/session";
import { listProjects } from "@/lib/store/people/projects";
import { TableScroll } from "@/components/ui/table-scroll";
import { renderedAt, When } from "@/components/ui/when";

export const metadata: Metadata = { title: "Projects" };

export default async function ProjectsPage() {
  await requirePage("projects:manage", "/settings/projects");
  const projects = await listProjects();
  const now = renderedAt();
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Projects</h1>
        <p className="mt-1 max-w-3xl text-slate-700 dark:text-slate-300">
          Each project keeps its own operations, audit trail, verifiers, webhooks and API tokens, in a database of its own:
          nothing of one is shown, searched or exported with another&apos;s, and a token works in its own project only.
          Its admins add its members on its Members page.
        </p>
      </div>
      <section aria-labelledby="new-project" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="new-project" className="mb-3 font-semibold">
          Create a project
        </h2>
        <NewProjectForm />
      </section>
      <TableScroll>
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Every project</caption>
          <thead>
            <tr className="text-slate-600 dark:text-slate-400">
              <th className="py-2 pr-4 font-medium">Project</th>
              <th className="py-2 pr-4 font-medium">Slug</th>
              <th className="py-2 pr-4 font-medium">Retention</th>
              <th className="py-2 font-medium">Created</th>
            </tr>
          </thead>
          <tbody>
            {projects.map((p) => (
              <tr key={p.id} className="border-t border-slate-200 dark:border-slate-800">
                <td className="py-3 pr-4">
                  {p.ready ? (
                    <a href={`/p/${p.slug}`} className="font-medium text-indigo-700 underline underline-offset-2 dark:text-indigo-300">
                      {p.name}
                    </a>
                  ) : (
                    <span>{p.name} (being prepared)</span>
                  )}
                </td>
                <td className="py-3 pr-4 font-mono">{p.slug}</td>
                <td className="py-3 pr-4">{p.retentionDays === null ? "keep everything" : `${p.retentionDays} days`}</td>
                <td className="py-3">
                  <When at={p.createdAt} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
