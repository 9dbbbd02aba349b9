"use server";

import { redirect } from "next/navigation";
import { knownError } from "@/lib/api/errors";
import { can } from "@/lib/domain/permissions";
import { currentPrincipal } from "@/lib/auth/session";
import { toolWarnings } from "@/lib/api/warnings";
import { setAuditSampling } from "@/lib/store/settings/audit-sampling";
import { inProject } from "@/lib/store/db/project-context";
import { projectPath } from "@/lib/domain/projects";

/**
 * An admin sets a tool's audit sampling rate (percent in the form; 0 stops sampling the tool).
 * A tool no operation has used yet is set all the same, with a warning beside the message.
 */
export async function setSamplingAction(form: FormData): Promise<void> {
  const me = await currentPrincipal();
  if (!me) redirect("/login?from=/metrics");
  const page = projectPath(me.project.slug, "/metrics");
  if (!can(me, "metrics:sampling")) redirect(`${page}?sampling=` + encodeURIComponent("You may not set audit sampling rates."));
  const tool = String(form.get("tool") ?? "");
  const percent = Number(String(form.get("percent") ?? "").trim());
  const answer = new URLSearchParams();
  try {
    await inProject(me.project, async () => {
      await setAuditSampling({ tool, rate: Number.isFinite(percent) ? percent / 100 : NaN, by: me.email });
      answer.set("sampling", percent === 0 ? `Stopped sampling ${tool.trim()}.` : `Sampling ${percent} % of ${tool.trim()}'s verified operations from now on.`);
      for (const w of await toolWarnings([tool.trim()])) answer.append("sampling_warning", w);
    });
  } catch (e) {
    const known = knownError(e);
    if (!known) throw e;
    answer.set("sampling", `${known.message}.`);
  }
  redirect(`${page}?${answer}`);
}
