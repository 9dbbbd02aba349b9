"use client";

import { inCurrentProject } from "@/components/shell/project-base";
import { useRouter } from "next/navigation";
import { Shortcuts } from "./shortcuts";

const href = (id: string) => `/operations/${encodeURIComponent(id)}`;

/** The review panel's button with this name, if it is there and may be used now. */
function usable(name: RegExp): HTMLButtonElement | null {
  const panel = document.getElementById("review-actions")?.closest("section");
  const button = [...(panel?.querySelectorAll("button") ?? [])].find((b) => name.test((b.getAttribute("aria-label") ?? b.textContent ?? "").trim()));
  return button && !button.disabled ? button : null;
}

/**
 * An operation's page keys: j/k to the next/previous operation in the review queue, and for
 * reviewers c, r, x to press Claim (or Take over), Resolve and Retract: only when that button
 * is on the page and enabled, so a key never does what the person could not do by hand.
 */
export function OperationKeys({ previous, next, reviewer }: { previous: string | null; next: string | null; reviewer: boolean }) {
  const router = useRouter();
  const press = (name: RegExp) => () => usable(name)?.click();
  return (
    <Shortcuts
      title="Operation page keys"
      keys={[
        { key: "j", label: next ? `Next in the review queue (${next})` : "Next in the review queue (none)", available: next !== null, run: () => router.push(inCurrentProject(href(next!))) },
        { key: "k", label: previous ? `Previous in the review queue (${previous})` : "Previous in the review queue (none)", available: previous !== null, run: () => router.push(inCurrentProject(href(previous!))) },
        ...(reviewer
          ? [
              { key: "c", label: "Claim (or take over) this operation", run: press(/^(Claim|Take over) /) },
              { key: "r", label: "Open Resolve", run: press(/^Resolve$/) },
              { key: "x", label: "Open Retract", run: press(/^Retract$/) },
            ]
          : []),
      ]}
    />
  );
}
