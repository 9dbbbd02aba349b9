import type { Metadata } from "next";
import { CreateTokenForm, RevokeButton } from "@/components/settings/tokens";
import { can, scopesAllowedFor } from "@/lib/domain/permissions";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { listAllTokens, listTokens, type AnyTokenSummary, type TokenSummary } from "@/lib/store/people/api-tokens";
import { TableScroll } from "@/components/ui/table-scroll";

export const metadata: Metadata = { title: "API tokens" };

const when = (d: Date | null) => (d ? d.toISOString().replace("T", " ").slice(0, 16) + " UTC" : "never");

export default async function TokensPage() {
  const me = await requirePage("tokens:own", "/settings/tokens");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const tokens = await listTokens(me.userId, me.project.id);
    const everyone = can(me, "members:manage") ? (await listAllTokens(me.project.id)).filter((t) => t.owner !== me.email) : null;
    return (
      <div className="space-y-8">
        <div>
          <h1 className="text-2xl font-semibold">API tokens</h1>
          <p className="mt-1 text-slate-700 dark:text-slate-300">
            Agents and scripts send <code className="font-mono">Authorization: Bearer &lt;token&gt;</code>. A token made here works in{" "}
            <span className="font-medium">{me.project.name}</span> only: what it sends lands here, and it reads nothing of another
            project. It acts as you, with at most your role&apos;s rights here; it is shown once and stored only as a hash.
          </p>
        </div>
        <section aria-labelledby="new-token" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="new-token" className="mb-3 font-semibold">
            Create a token
          </h2>
          <CreateTokenForm allowed={scopesAllowedFor(me.role)} />
        </section>
        <section aria-labelledby="your-tokens">
          <h2 id="your-tokens" className="mb-2 font-semibold">
            Your tokens
          </h2>
          {tokens.length === 0 ? (
            <p className="text-slate-700 dark:text-slate-300">You have no tokens yet.</p>
          ) : (
            <TokenTable tokens={tokens} />
          )}
        </section>
        {everyone ? (
          <section aria-labelledby="all-tokens">
            <h2 id="all-tokens" className="mb-1 font-semibold">
              Other users&apos; tokens
            </h2>
            <p className="mb-2 text-sm text-slate-700 dark:text-slate-300">
              As this project&apos;s admin you see every live token of it (its name and prefix, never the secret) and can revoke any of them.
            </p>
            {everyone.length === 0 ? (
              <p className="text-slate-700 dark:text-slate-300">No other user has a token.</p>
            ) : (
              <TokenTable tokens={everyone} showOwner />
            )}
          </section>
        ) : null}
      </div>
    );
  });
}

/** Live tokens (names, prefixes and use, never a secret), each with its Revoke; with their owners for an admin's view of everyone's. */
function TokenTable({ tokens, showOwner }: { tokens: (TokenSummary | AnyTokenSummary)[]; showOwner?: boolean }) {
  const owner = (t: TokenSummary | AnyTokenSummary) => ("owner" in t ? t.owner : "");
  return (
    <TableScroll>
      <table className="w-full text-left text-sm">
        <thead>
          <tr className="text-slate-600 dark:text-slate-400">
            {showOwner ? <th className="py-2 pr-4 font-medium">Owner</th> : null}
            <th className="py-2 pr-4 font-medium">Name</th>
            <th className="py-2 pr-4 font-medium">Token</th>
            <th className="py-2 pr-4 font-medium">Scopes</th>
            <th className="py-2 pr-4 font-medium">Created</th>
            <th className="py-2 pr-4 font-medium">Last used</th>
            <th className="py-2 font-medium">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => (
            <tr key={t.id} className="border-t border-slate-200 dark:border-slate-800">
              {showOwner ? <td className="py-2 pr-4 break-all">{owner(t)}</td> : null}
              <td className="py-2 pr-4">{t.name}</td>
              <td className="py-2 pr-4 font-mono">
                {t.prefix}…{t.last4}
              </td>
              <td className="py-2 pr-4">{t.scopes.join(", ")}</td>
              <td className="py-2 pr-4">{when(t.createdAt)}</td>
              <td className="py-2 pr-4">{when(t.lastUsedAt)}</td>
              <td className="py-2">
                <RevokeButton id={t.id} label={`${showOwner ? `${owner(t)}'s ` : ""}${t.name} (${t.prefix}…${t.last4})`} anyOwner={showOwner} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
