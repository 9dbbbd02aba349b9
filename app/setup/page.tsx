import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SetupForm } from "@/components/auth/setup-form";
import { ProductPitch } from "@/components/product-pitch";
import { setupCodeRequired } from "@/lib/store/people/setup-code";
import { countUsers } from "@/lib/store/people/users";

export const metadata: Metadata = { title: "Create the first admin" };

/** Exists only while no user does; afterwards it sends everyone to sign in. */
export default async function SetupPage() {
  if ((await countUsers()) > 0) redirect("/login");
  const needsCode = await setupCodeRequired();
  return (
    <main className="mx-auto grid max-w-5xl gap-12 px-6 py-12 lg:grid-cols-[3fr_2fr] lg:py-20">
      <ProductPitch />
      <section aria-labelledby="setup" className="self-start rounded-xl border border-slate-200 p-6 shadow-sm dark:border-slate-800">
        <h2 id="setup" className="text-xl font-semibold">
          Create the first admin
        </h2>
        <p className="mb-4 mt-1 text-sm text-slate-600 dark:text-slate-400">
          Nobody has an account yet. The first person becomes the admin and can invite the rest. This page disappears once
          done.
        </p>
        <SetupForm needsCode={needsCode} />
      </section>
    </main>
  );
}
