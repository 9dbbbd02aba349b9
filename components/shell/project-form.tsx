"use client";

import type { FormHTMLAttributes } from "react";
import { useProjectSlug, inProjectPath } from "./project-base";

/** A form whose `action` is a path of this app, put in the current project as Link does (a GET filter form, say). */
export function ProjectForm({ action, ...rest }: FormHTMLAttributes<HTMLFormElement> & { action: string }) {
  const slug = useProjectSlug();
  return <form action={inProjectPath(slug, action)} {...rest} />;
}
