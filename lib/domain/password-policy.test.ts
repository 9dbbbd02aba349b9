import { describe, expect, it } from "vitest";
import { MAX_PASSWORD_LENGTH, passwordProblem, passwordRules } from "./password-policy";

describe("password rules", () => {
  it("counts characters, not UTF-16 units, and says how many so far", () => {
    expect(passwordRules("ab")[0]).toMatchObject({ id: "length", met: false, text: "At least 12 characters (2 so far)" });
    expect(passwordRules("😀".repeat(12))[0].met).toBe(true);
    expect(passwordRules("😀".repeat(11))[0].met).toBe(false);
  });
  it("refuses the email, in any case or spacing", () => {
    expect(passwordProblem("Alice@Example.com", { email: "alice@example.com" })).toBe("password must not be the email address");
    expect(passwordProblem("a-much-longer-one", { email: "alice@example.com" })).toBeNull();
  });
  it("a change must differ from the current password", () => {
    expect(passwordProblem("same-password-123", { current: "same-password-123" })).toBe("the new password must differ from the current one");
    expect(passwordProblem("other-password-123", { current: "same-password-123" })).toBeNull();
  });
  it("an empty field meets no rule (the checklist must not say 'Met: not your email' before anything is typed)", () => {
    expect(passwordRules("", { email: "a@b.test", current: "old password here" }).filter((r) => r.met)).toEqual([]);
    expect(passwordRules("a long new passphrase", { email: "a@b.test", current: "old password here" }).every((r) => r.met)).toBe(true);
    expect(passwordProblem("", { email: "a@b.test" })).toMatch(/at least 12 characters/);
  });

  it("has an upper bound, shown only when passed", () => {
    expect(passwordRules("x".repeat(MAX_PASSWORD_LENGTH)).map((r) => r.id)).toEqual(["length"]);
    expect(passwordProblem("x".repeat(MAX_PASSWORD_LENGTH + 1))).toBe(`password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  });
  it("names the first broken rule, short before anything else", () => {
    expect(passwordProblem("short", { email: "short", current: "short" })).toBe("password must be at least 12 characters");
  });
});
