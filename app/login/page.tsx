import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/auth/login-form";
import { ProductPitch } from "@/components/product-pitch";
import { safeRedirectPath } from "@/lib/auth/redirect";
import { currentPrincipal, PASSWORD_CHANGE_PATH, pendingPasswordChange } from "@/lib/auth/session";
import { countUsers } from "@/lib/store/people/users";

export const metadata: Metadata = { title: "Sign in" };

/** Why single sign-on was refused (lib/auth/auth.ts's signIn callback), in words. */
const SSO_REFUSALS: Record<string, string> = {
  "sso-unverified": "Single sign-on was refused: your identity provider has not verified your email address.",
  "sso-domain": "Single sign-on was refused: accounts of your email domain may not sign in here.",
  "sso-other_identity": "Single sign-on was refused: this email's account is linked to another identity at your provider.",
  "sso-disabled": "Single sign-on was refused: this account is disabled.",
};

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ from?: string | string[]; error?: string | string[] }> }) {
  const params = await searchParams;
  // Only ever a path on this origin (lib/auth/redirect.ts): never `//evil.example` or `/\evil.example`.
  const from = safeRedirectPath(params.from);
  const error = typeof params.error === "string" ? params.error : undefined;
  if (await currentPrincipal()) redirect(from);
  if (await pendingPasswordChange()) redirect(PASSWORD_CHANGE_PATH);
  if ((await countUsers()) === 0) redirect("/setup");
  const sso = process.env.AUTH_OIDC_ISSUER ? { id: "oidc", name: process.env.AUTH_OIDC_NAME || "single sign-on" } : null;
  return (
    <main className="mx-auto grid max-w-5xl gap-12 px-6 py-12 lg:grid-cols-[3fr_2fr] lg:py-20">
      <ProductPitch />
      <section aria-labelledby="signin" className="self-start rounded-xl border border-slate-200 p-6 shadow-sm dark:border-slate-800">
        <h2 id="signin" className="mb-4 text-xl font-semibold">
          Sign in
        </h2>
        {error && error !== "CredentialsSignin" ? (
          <p role="alert" className="mb-4 text-sm text-rose-700 dark:text-rose-300">
            {SSO_REFUSALS[error] ?? "Sign-in did not complete. Try again."}
          </p>
        ) : null}
        <LoginForm from={from} sso={sso} />
      </section>
    </main>
  );
}
