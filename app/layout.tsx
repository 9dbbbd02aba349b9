import type { Metadata } from "next";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Reconcile", template: "%s · Reconcile" },
  description: "Review what AI-agent tool calls actually did: a receipt is not an outcome.",
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-white text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">{children}</body>
    </html>
  );
}
