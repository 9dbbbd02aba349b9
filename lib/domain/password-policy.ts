/**
 * The password rules, in one place for the store (which enforces them) and the forms (which
 * show them inline as the user types). Length is what matters (NIST SP 800-63B): at least 12
 * characters, at most 1,024 (argon2 hashes whatever it is given), not the email itself.
 */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

export type PasswordRule = { id: "length" | "max" | "not-email" | "differs"; text: string; met: boolean };

/** Each rule and whether `password` meets it. `current` (a password change) must differ. */
export function passwordRules(password: string, opts: { email?: string; current?: string } = {}): PasswordRule[] {
  const chars = [...password].length;
  const rules: PasswordRule[] = [
    { id: "length", text: `At least ${MIN_PASSWORD_LENGTH} characters (${chars} so far)`, met: chars >= MIN_PASSWORD_LENGTH },
  ];
  if (chars > MAX_PASSWORD_LENGTH) rules.push({ id: "max", text: `At most ${MAX_PASSWORD_LENGTH} characters`, met: false });
  // Nothing typed meets nothing: an empty field is not "not your email" in any useful sense.
  const typed = password !== "";
  if (opts.email) rules.push({ id: "not-email", text: "Not your email address", met: typed && password.trim().toLowerCase() !== opts.email.trim().toLowerCase() });
  if (opts.current !== undefined) rules.push({ id: "differs", text: "Different from the current password", met: typed && password !== opts.current });
  return rules;
}

/** The first rule `password` breaks, as a sentence for an error, or null. */
export function passwordProblem(password: string, opts: { email?: string; current?: string } = {}): string | null {
  const broken = passwordRules(password, opts).find((r) => !r.met);
  if (!broken) return null;
  switch (broken.id) {
    case "length":
      return `password must be at least ${MIN_PASSWORD_LENGTH} characters`;
    case "max":
      return `password must be at most ${MAX_PASSWORD_LENGTH} characters`;
    case "not-email":
      return "password must not be the email address";
    case "differs":
      return "the new password must differ from the current one";
  }
}
