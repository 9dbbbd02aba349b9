"use client";

import { useState } from "react";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordRules } from "@/lib/domain/password-policy";
import { Input } from "@/components/ui/form";

/**
 * A new-password input with its rules written out beside it, each ticked as the typing meets
 * it (the browser's own tooltip only appears on submit, and says less). The form still submits
 * to the server, which applies the same rules (lib/domain/password-policy.ts).
 */
export function NewPasswordField({ id, name, label, email, autoFocus }: { id: string; name: string; label: string; email?: string; autoFocus?: boolean }) {
  const [value, setValue] = useState("");
  const rules = passwordRules(value, { email });
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-800 dark:text-slate-200">
        {label}
      </label>
      <Input
        id={id}
        name={name}
        type="password"
        autoComplete="new-password"
        minLength={MIN_PASSWORD_LENGTH}
        maxLength={MAX_PASSWORD_LENGTH}
        required
        autoFocus={autoFocus}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        aria-describedby={`${id}-rules`}
      />
      <ul id={`${id}-rules`} aria-live="polite" className="space-y-0.5 text-xs" data-testid={`${id}-rules`}>
        {rules.map((r) => (
          <li key={r.id} data-met={r.met ? "yes" : "no"} className={r.met ? "text-emerald-700 dark:text-emerald-300" : "text-slate-600 dark:text-slate-400"}>
            <span aria-hidden="true">{r.met ? "✓ " : "○ "}</span>
            <span className="sr-only">{r.met ? "Met: " : "Not yet: "}</span>
            {r.text}
          </li>
        ))}
      </ul>
    </div>
  );
}
