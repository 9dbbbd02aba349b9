"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import { useQuery } from "@tanstack/react-query";

/** Query keys and hooks for the dashboard's client components, in one place. */
export const operationKeys = {
  all: ["operations"] as const,
  newer: (filters: string, cursor: string) => ["operations", "newer", filters, cursor] as const,
};

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(inCurrentProject(url), { headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(`${res.status} from ${url}`);
  return res.json() as Promise<T>;
}

/** How many operations matching these filters arrived after `cursor` (polled). */
export function useNewerOperations(filters: string, cursor: string | null) {
  return useQuery({
    queryKey: operationKeys.newer(filters, cursor ?? ""),
    enabled: cursor !== null,
    refetchInterval: 5_000,
    queryFn: async () => {
      const q = new URLSearchParams(filters);
      q.delete("cursor");
      q.set("newer_than", cursor!);
      q.set("limit", "200");
      const body = await getJson<{ items: unknown[]; next_cursor: string | null }>(`/api/v1/operations?${q}`);
      return { count: body.items.length, more: body.next_cursor !== null };
    },
  });
}
