"use server";

import { redirect } from "next/navigation";
import { knownError } from "@/lib/api/errors";
import { can } from "@/lib/domain/permissions";
import { currentPrincipal } from "@/lib/auth/session";
import { setAuditSampling } from "@/lib/store/settings/audit-sampling";

/** An admin sets a tool's audit sampling rate (percent in the form; 0 stops sampling the tool). */
export async function setSamplingAction(form: FormData): Promise<void> {
  const me = await currentPrincipal();
  if (!me) redirect("/login?from=/metrics");
  if (!can(me, "metrics:sampling")) redirect("/metrics?sampling=" + encodeURIComponent("You may not set audit sampling rates."));
  const tool = String(form.get("tool") ?? "");
  const percent = Number(String(form.get("percent") ?? "").trim());
  let message: string;
  try {
    await setAuditSampling({ tool, rate: Number.isFinite(percent) ? percent / 100 : NaN, by: me.email });
    message = percent === 0 ? `Stopped sampling ${tool.trim()}.` : `Sampling ${percent} % of ${tool.trim()}'s verified operations from now on.`;
  } catch (e) {
    const known = knownError(e);
    if (!known) throw e;
    message = `${known.message}.`;
  }
  redirect("/metrics?sampling=" + encodeURIComponent(message));
}
