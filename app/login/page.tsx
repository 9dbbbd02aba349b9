import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/auth/login-form";
import { ProductPitch } from "@/components/product-pitch";
import { currentPrincipal } from "@/lib/auth/session";
import { countUsers } from "@/lib/store/users";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ from?: string; error?: string }> }) {
  const { from = "/", error } = await searchParams;
  if (await currentPrincipal()) redirect(from.startsWith("/") && !from.startsWith("//") ? from : "/");
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
            Sign-in did not complete. Try again.
          </p>
        ) : null}
        <LoginForm from={from} sso={sso} />
      </section>
    </main>
  );
}
