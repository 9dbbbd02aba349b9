"use client";

import type { AnchorHTMLAttributes } from "react";
import { useProjectSlug, inProjectPath } from "./project-base";

/** A plain link (a download, say) to a path of this app, put in the current project as Link does. */
export function ProjectAnchor({ href, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const slug = useProjectSlug();
  return <a href={inProjectPath(slug, href)} {...rest} />;
}
