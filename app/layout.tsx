import type { Metadata } from "next";
import { headers } from "next/headers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Reconcile", template: "%s · Reconcile" },
  description: "Review what AI-agent tool calls actually did: a receipt is not an outcome.",
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Every page renders per request: the Content-Security-Policy nonce (set by proxy.ts) must
  // reach the scripts Next.js emits, which a prerendered page could not carry.
  await headers();
  return (
    <html lang="en">
      <body className="min-h-screen bg-white text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">{children}</body>
    </html>
  );
}
