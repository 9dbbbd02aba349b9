import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { ChangePasswordForm } from "@/components/settings/account";
import { currentPrincipal, pendingPasswordChange } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Choose your password" };

/**
 * Where a session whose password an admin set is sent: choosing one's own is the only thing it
 * can do (lib/auth/session.ts). Everyone else changes theirs on /settings/account.
 */
export default async function ChoosePasswordPage() {
  const pending = await pendingPasswordChange();
  if (!pending) redirect((await currentPrincipal()) ? "/settings/account" : "/login");
  return (
    <main className="mx-auto max-w-lg px-6 py-12 lg:py-20">
      <h1 className="text-2xl font-semibold">Choose your own password</h1>
      <p className="mb-6 mt-2 text-slate-700 dark:text-slate-300">
        An admin set the password you signed in with for <span className="font-medium">{pending.email}</span>. Choose one only you
        know before going on.
      </p>
      <ChangePasswordForm email={pending.email} required />
    </main>
  );
}
