"use client";

import NextLink from "next/link";
import type { ComponentProps } from "react";
import { useProjectSlug, inProjectPath } from "./project-base";

/**
 * next/link for the app's own pages: a project page's path (`/operations/x`) is put in the
 * current project (`/p/{slug}/operations/x`), so pages and components name their links as before
 * and stay in the project they are shown in.
 */
export default function Link({ href, ...rest }: ComponentProps<typeof NextLink>) {
  const slug = useProjectSlug();
  return <NextLink href={typeof href === "string" ? inProjectPath(slug, href) : href} {...rest} />;
}
