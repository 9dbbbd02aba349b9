"use client";

import { createContext, useContext } from "react";
import { isProjectPage, projectPath, unprojectedPath } from "@/lib/domain/projects";

/**
 * The project the page shows (null on the instance's own pages), for the links and API calls
 * its client components make: every project page and every session API call carries it in its
 * path (`/p/{slug}/…`, proxy.ts).
 */
const Base = createContext<string | null>(null);

export function ProjectBase({ slug, children }: { slug: string | null; children: React.ReactNode }) {
  return <Base.Provider value={slug}>{children}</Base.Provider>;
}

/** The current project's slug, or null. */
export function useProjectSlug(): string | null {
  return useContext(Base);
}

/** A path of this app in the current project: a project page or an API path gets `/p/{slug}` in front; others are left alone. */
export function inProjectPath(slug: string | null, href: string): string {
  if (!slug || !href.startsWith("/") || href.startsWith("//") || href.startsWith("/p/")) return href;
  const path = href.split(/[?#]/)[0];
  return isProjectPage(path) || path.startsWith("/api/v1/") ? projectPath(slug, href) : href;
}

/** `inProjectPath` for the current project. */
export function useProjectHref(): (href: string) => string {
  const slug = useProjectSlug();
  return (href) => inProjectPath(slug, href);
}

/** A path of this app (a page or an API path) in the project of the page the browser shows: for code outside a component (`useProjectHref` inside one). */
export function inCurrentProject(path: string): string {
  const at = typeof window === "undefined" ? null : unprojectedPath(window.location.pathname);
  return inProjectPath(at?.slug ?? null, path);
}
