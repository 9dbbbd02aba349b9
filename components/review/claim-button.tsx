"use client";

import { useActionState } from "react";
import { claimAction, releaseAction, type ClaimState } from "@/lib/actions/review";

const btn = "rounded-md border border-slate-300 bg-white px-2 py-1 text-xs font-medium hover:bg-slate-50 dark:border-slate-700 dark:bg-slate-900 dark:hover:bg-slate-800";

/**
 * Claim, release or take over one queue item. Only the holder releases, or an admin (who is
 * offered Release on anyone's claim); the server refuses everyone else all the same.
 */
export function ClaimControls({ id, holder, me, admin = false }: { id: string; holder: string | null; me: string; admin?: boolean }) {
  const [claimState, claim, claiming] = useActionState<ClaimState, FormData>(claimAction, null);
  const [releaseState, release, releasing] = useActionState<ClaimState, FormData>(releaseAction, null);
  const error = claimState?.error ?? releaseState?.error;
  return (
    <div className="flex flex-wrap items-center gap-2">
      {holder && (holder === me || admin) ? (
        <form action={release}>
          <input type="hidden" name="id" value={id} />
          <button type="submit" className={btn} disabled={releasing} aria-label={`Release ${id}`}>
            Release
          </button>
        </form>
      ) : null}
      {holder === me ? null : (
        <form action={claim}>
          <input type="hidden" name="id" value={id} />
          {holder ? <input type="hidden" name="take_over" value="true" /> : null}
          <button type="submit" className={btn} disabled={claiming} aria-label={`${holder ? "Take over" : "Claim"} ${id}`}>
            {holder ? "Take over" : "Claim"}
          </button>
        </form>
      )}
      {error ? <span role="alert" className="text-xs text-rose-800 dark:text-rose-300">{error}</span> : null}
    </div>
  );
}
