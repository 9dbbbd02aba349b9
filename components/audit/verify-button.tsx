"use client";

import { useActionState } from "react";
import { verifyChainAction, verifyInstanceTrailAction, type VerifyState } from "@/lib/actions/audit";
import { Button, Notice } from "@/components/ui/form";

/** Verifies the project's chain, or (`trail="instance"`) the instance's own security trail. */
export function VerifyButton({ trail = "project" }: { trail?: "project" | "instance" }) {
  const [state, action, pending] = useActionState<VerifyState>(trail === "instance" ? verifyInstanceTrailAction : verifyChainAction, null);
  return (
    <form action={action} className="space-y-2">
      <Button type="submit" variant="secondary" disabled={pending}>
        {pending ? "Verifying every link…" : trail === "instance" ? "Verify the trail now" : "Verify the chain now"}
      </Button>
      {state ? <Notice kind={state.ok ? "ok" : "error"}>{state.message}</Notice> : null}
    </form>
  );
}
