import type { Metadata } from "next";
import { AddMemberForm, MemberRow, RenameProjectForm } from "@/components/settings/projects-admin";
import { requirePage } from "@/lib/auth/session";
import { can } from "@/lib/domain/permissions";
import { listMembers } from "@/lib/store/people/projects";
import { TableScroll } from "@/components/ui/table-scroll";

export const metadata: Metadata = { title: "Members" };

export default async function MembersPage() {
  const me = await requirePage("members:manage", "/settings/members");
  const members = await listMembers(me.project.id);
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Members of {me.project.name}</h1>
        <p className="mt-1 max-w-3xl text-slate-700 dark:text-slate-300">
          Who may open this project, and as what: viewers read; reviewers also resolve, retract and approve held calls;
          admins also manage its members, tokens, verifiers, webhooks and sampling. Nobody outside this list sees that the
          project exists. Instance admins are admin in every project.
        </p>
      </div>
      {can(me, "project:settings") ? (
        <section aria-labelledby="this-project" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="this-project" className="mb-3 font-semibold">
            This project
          </h2>
          <RenameProjectForm name={me.project.name} slug={me.project.slug} />
        </section>
      ) : null}
      <section aria-labelledby="add-member" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="add-member" className="mb-3 font-semibold">
          Add a member
        </h2>
        <AddMemberForm />
      </section>
      <TableScroll>
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Members of {me.project.name}</caption>
          <thead>
            <tr className="text-slate-600 dark:text-slate-400">
              <th className="py-2 pr-4 font-medium">Email</th>
              <th className="py-2 pr-4 font-medium">Role here</th>
              <th className="py-2 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <MemberRow key={m.userId} m={{ userId: m.userId, email: m.email, role: m.role, instanceAdmin: m.instanceAdmin, disabled: m.disabled, member: m.since !== null }} isMe={m.userId === me.userId} />
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
