"use client";

import { useActionState } from "react";
import { verifyChainAction, type VerifyState } from "@/lib/actions/audit";
import { Button, Notice } from "@/components/ui/form";

export function VerifyButton() {
  const [state, action, pending] = useActionState<VerifyState>(verifyChainAction, null);
  return (
    <form action={action} className="space-y-2">
      <Button type="submit" variant="secondary" disabled={pending}>
        {pending ? "Verifying every link…" : "Verify the chain now"}
      </Button>
      {state ? <Notice kind={state.ok ? "ok" : "error"}>{state.message}</Notice> : null}
    </form>
  );
}
