import type { Metadata } from "next";
import { ChangePasswordForm } from "@/components/settings/account";
import { requirePage } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Your account" };

export default async function AccountPage() {
  const me = await requirePage(undefined, "/settings/account");
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Your account</h1>
        <p className="mt-1 text-slate-700 dark:text-slate-300">
          Signed in as <span className="font-medium">{me.email}</span>, {me.role === "admin" ? "an" : "a"} <span className="font-medium">{me.role}</span>. An admin
          changes roles.
        </p>
      </div>
      <section aria-labelledby="password" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="password" className="mb-3 font-semibold">
          Change your password
        </h2>
        <ChangePasswordForm email={me.email} />
      </section>
    </div>
  );
}
