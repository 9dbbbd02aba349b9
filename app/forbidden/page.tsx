import Link from "next/link";

export default function Forbidden() {
  return (
    <main className="mx-auto max-w-xl px-6 py-20">
      <h1 className="text-2xl font-semibold">You may not open this page</h1>
      <p className="mt-2 text-slate-700 dark:text-slate-300">Your role does not allow it. An admin can change your role.</p>
      <Link href="/" className="mt-6 inline-block text-indigo-700 underline-offset-4 hover:underline dark:text-indigo-300">
        Back to the overview
      </Link>
    </main>
  );
}
