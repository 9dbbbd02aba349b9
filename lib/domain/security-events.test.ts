import { describe, expect, it } from "vitest";
import { eventSummary, isInstanceEvent, securityEventSchema, type SecurityEvent } from "./security-events";

describe("which chain a security event belongs to", () => {
  const types = securityEventSchema.options.map((o) => o.shape.type.value);

  it("people, sign-in, tokens, projects and members are the instance's; a project's doings are its own", () => {
    // A new event type must be placed here on purpose: the two lists together are every type.
    const instance: SecurityEvent["type"][] = [
      "user.created",
      "user.instance_admin",
      "project.created",
      "project.changed",
      "member.set",
      "member.removed",
      "user.role_changed",
      "user.disabled",
      "user.enabled",
      "token.created",
      "token.revoked",
      "signin.succeeded",
      "signin.failed",
      "signin.throttled",
      "signout",
      "password.changed",
      "password.reset",
      "sessions.ended",
      "identity.linked",
    ];
    const project: SecurityEvent["type"][] = [
      "authorization.refused",
      "authorization.refusals",
      "audit.exported",
      "projections.rebuilt",
      "verifier.version",
      "audit_sampling.changed",
      "verifier.secret_set",
      "verifier.secret_deleted",
      "archive.sealed",
    ];
    expect([...instance, ...project].sort()).toEqual([...types].sort());
    for (const t of instance) expect(isInstanceEvent(t), t).toBe(true);
    for (const t of project) expect(isInstanceEvent(t), t).toBe(false);
  });
});

describe("an event in one line", () => {
  it("names who and what, and how a change went", () => {
    expect(eventSummary({ type: "signin.failed", email: "a@x.example", reason: "wrong password", method: "password" })).toBe("a@x.example · via password · (wrong password)");
    expect(eventSummary({ type: "member.set", project: "payments", email: "b@x.example", from: null, to: "reviewer" })).toBe("b@x.example · project payments · none → reviewer");
    expect(eventSummary({ type: "project.changed", project: "payments", name: { from: "Pay", to: "Payments" }, retention_days: { from: null, to: 400 } })).toBe(
      "project payments · name “Pay” → “Payments” · retention the server's default → 400 days",
    );
    expect(eventSummary({ type: "token.created", token_id: "t1", owner: "c@x.example", name: "ci", scopes: ["ingest", "read"], project: "default" })).toBe(
      "project default · “ci” · scopes ingest, read · owner c@x.example",
    );
    expect(eventSummary({ type: "signin.throttled", scope: "address", key: "203.0.113.9", until: "2026-12-06T05:00:00.000Z" })).toBe(
      "address 203.0.113.9 · until 2026-12-06T05:00:00.000Z",
    );
    expect(eventSummary({ type: "audit.exported", format: "ndjson", filter: { trail: "instance" } })).toBe('ndjson {"trail":"instance"}');
  });
});
