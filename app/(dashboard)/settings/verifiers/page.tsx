import type { Metadata } from "next";
import { VerifiersAdmin } from "@/components/settings/verifiers";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { listOperations, listQuerySchema } from "@/lib/store/queries/list-operations";
import { listVerifiers } from "@/lib/store/settings/verifiers";
import { allowedSecretNames } from "@/lib/verifiers/secrets";
import { secretsWithUse } from "@/lib/api/verifier-secrets";
import { VerifierSecrets } from "@/components/settings/verifier-secrets";
import { renderedAt } from "@/components/ui/when";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";

export const metadata: Metadata = { title: "Verifiers" };

export default async function VerifiersPage() {
  const me = await requirePage("verifiers:manage", "/settings/verifiers");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const [verifiers, recent, secrets] = await Promise.all([listVerifiers(), listOperations(listQuerySchema.parse({ limit: "30" })), secretsWithUse()]);
    const secretNames = allowedSecretNames();
    const inDefault = me.project.id === DEFAULT_PROJECT;
    return (
      <div className="space-y-8">
        <div>
          <h1 className="text-2xl font-semibold">Verifiers</h1>
          <p className="mt-1 max-w-3xl text-slate-700 dark:text-slate-300">
            A verifier is a check Reconcile performs itself: after each receipt of its tool it reads the canonical resource again
            and again over an observation window, and records each read on the operation&apos;s timeline. Until the window closes an
            &ldquo;absent&rdquo; read leaves the operation uncertain (&ldquo;observation window open&rdquo;). Secrets are written{" "}
            <code className="font-mono">{"{env.NAME}"}</code> (from the server&apos;s environment) or{" "}
            <code className="font-mono">{"{secret.NAME}"}</code> (stored encrypted, below), and never shown. Every save is a new version;
            nothing is edited.
          </p>
          <p className="mt-2 max-w-3xl text-slate-700 dark:text-slate-300" data-testid="verifier-secret-names">
            {secretNames.length ? (
              <>
                Variables {inDefault ? "verifiers" : "this project's verifiers"} may send on this server:{" "}
                {secretNames.map((n, i) => (
                  <span key={n}>
                    {i ? ", " : ""}
                    <code className="font-mono">{n}</code>
                  </span>
                ))}
                . Its operator {inDefault ? "lists them" : "grants them to this project"} in <code className="font-mono">RECONCILE_VERIFIER_ENV</code>.
              </>
            ) : (
              <>
                This server lets {inDefault ? "verifiers" : "this project's verifiers"} send none of its environment variables: its operator{" "}
                {inDefault ? "lists" : "grants"} the variables they may use in <code className="font-mono">RECONCILE_VERIFIER_ENV</code>
                {inDefault ? "" : " (NAME@" + me.project.slug + ")"}.
              </>
            )}
            {inDefault ? null : <> Keep this project&apos;s own credentials as its stored secrets, below.</>}
          </p>
        </div>
        <VerifiersAdmin
          verifiers={verifiers.map((v) => ({ name: v.name, version: v.version, versions: v.versions, tool: v.tool, enabled: v.enabled, definition: v.definition, created_at: v.created_at, created_by: v.created_by }))}
          recent={recent.items.map((o) => ({ id: o.operation_id, tool: o.tool }))}
        />
        <VerifierSecrets secrets={secrets.items} missing={secrets.missing} now={renderedAt()} />
      </div>
    );
  });
}
