"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useTransition } from "react";
import { operationKeys, useNewerOperations } from "./queries";

/** New operations announce themselves instead of pushing the list around. */
export function NewOperationsNotice({ filters, newest }: { filters: string; newest: string | null }) {
  const { data } = useNewerOperations(filters, newest);
  const router = useRouter();
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  if (!data?.count) return null;
  return (
    <div role="status" className="flex items-center justify-between rounded-md border border-indigo-300 bg-indigo-50 px-3 py-2 text-sm dark:border-indigo-800 dark:bg-indigo-950">
      <span>
        {data.more ? "200+" : data.count} new operation{data.count === 1 ? "" : "s"} since this page loaded
      </span>
      <button
        type="button"
        disabled={pending}
        onClick={() =>
          startTransition(() => {
            router.refresh();
            void queryClient.invalidateQueries({ queryKey: operationKeys.all });
          })
        }
        className="font-medium text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300"
      >
        {pending ? "Loading…" : "Show"}
      </button>
    </div>
  );
}
