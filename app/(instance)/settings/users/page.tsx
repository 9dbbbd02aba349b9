import type { Metadata } from "next";
import { AddUserForm, UserRow } from "@/components/settings/users-admin";
import { requirePage } from "@/lib/auth/session";
import { listUsers } from "@/lib/store/people/users";
import { TableScroll } from "@/components/ui/table-scroll";

export const metadata: Metadata = { title: "Users" };

export default async function UsersPage() {
  const me = await requirePage("users:manage", "/settings/users");
  const users = await listUsers();
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Users</h1>
        <p className="mt-1 text-slate-700 dark:text-slate-300">
          Everyone on this server. Their role here is their role in the default project, whose admins are the instance&apos;s
          admins: they manage users and projects, and are admin in every project. Viewers read; reviewers also resolve and
          retract. Each project&apos;s admins choose its members on its Members page. A disabled user&apos;s sessions and
          tokens stop working at once; &ldquo;Sign out everywhere&rdquo; ends a user&apos;s sessions on every device and
          leaves their tokens working.
        </p>
      </div>
      <section aria-labelledby="add-user" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="add-user" className="mb-3 font-semibold">
          Add a user
        </h2>
        <AddUserForm />
      </section>
      <TableScroll>
        <table className="w-full text-left text-sm">
          <caption className="sr-only">All users</caption>
          <thead>
            <tr className="text-slate-600 dark:text-slate-400">
              <th className="py-2 pr-4 font-medium">Email</th>
              <th className="py-2 pr-4 font-medium">Role in the default project</th>
              <th className="py-2 pr-4 font-medium">Status</th>
              <th className="py-2 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <UserRow key={u.id} user={{ ...u, createdAt: u.createdAt.toISOString() }} isMe={u.id === me.userId} />
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
