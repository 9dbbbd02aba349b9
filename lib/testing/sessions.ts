/**
 * Browser-like access for integration tests: sign in through Auth.js's real credentials
 * endpoint (CSRF token, then the callback) and call server actions the way React does
 * (the action id from the build's manifest, the arguments encoded by React's own encoder).
 */
import { readFileSync } from "node:fs";
import { baseUrl } from "./integration";

type Reply = (value: unknown) => Promise<string | FormData>;

function cookiesOf(res: Response): string[] {
  return res.headers.getSetCookie().map((c) => c.split(";")[0]);
}

/** Signs in; returns the session cookie header, or the failure's redirect location. */
export async function signInHttp(
  email: string,
  password: string,
  headers: Record<string, string> = {},
  base = baseUrl,
): Promise<{ cookie: string | null; location: string }> {
  const csrfRes = await fetch(`${base}/api/auth/csrf`, { headers });
  const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded", cookie: cookiesOf(csrfRes).join("; ") },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${base}/` }),
  });
  const session = cookiesOf(res).find((c) => c.includes("authjs.session-token="));
  return { cookie: session ?? null, location: res.headers.get("location") ?? "" };
}

let manifest: Record<string, { exportedName: string }> | null = null;
function actionId(name: string): string {
  manifest ??= JSON.parse(readFileSync(".next/server/server-reference-manifest.json", "utf8")).node;
  const entry = Object.entries(manifest!).find(([, v]) => v.exportedName === name);
  if (!entry) throw new Error(`no server action named ${name} in the build`);
  return entry[0];
}

/** Signs out through Auth.js's real endpoint (CSRF token, then the POST), as the browser does. */
export async function signOutHttp(cookie: string, base = baseUrl): Promise<number> {
  const csrfRes = await fetch(`${base}/api/auth/csrf`, { headers: { cookie } });
  const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
  const res = await fetch(`${base}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: [cookie, ...cookiesOf(csrfRes)].join("; ") },
    body: new URLSearchParams({ csrfToken, callbackUrl: `${base}/login` }),
  });
  return res.status;
}

/**
 * Calls a form server action `(prevState, formData)` as the browser does; returns the raw answer.
 * `base` is another server than the suite's shared one (one a test started itself).
 */
export async function callAction(name: string, fields: Record<string, string | string[]>, cookie?: string | null, path = "/settings/tokens", base = baseUrl) {
  return sendAction(name, fields, true, cookie, path, base);
}

/** The same for an action of the form alone, `(formData)` (a plain `<form action>`, no useActionState). */
export async function callFormAction(name: string, fields: Record<string, string | string[]>, cookie?: string | null, path = "/", base = baseUrl) {
  return sendAction(name, fields, false, cookie, path, base);
}

async function sendAction(name: string, fields: Record<string, string | string[]>, withState: boolean, cookie: string | null | undefined, path: string, base: string) {
  // @ts-expect-error: React's reply encoder ships with Next.js without type declarations.
  const { encodeReply } = (await import("next/dist/compiled/react-server-dom-turbopack/client.node")) as { encodeReply: Reply };
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) form.append(k, item);
  const body = await encodeReply(withState ? [null, form] : [form]);
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "next-action": actionId(name),
      accept: "text/x-component",
      origin: base,
      ...(typeof body === "string" ? { "content-type": "text/plain;charset=UTF-8" } : {}),
      ...(cookie ? { cookie } : {}),
    },
    body,
  });
  // A server action's redirect comes as `x-action-redirect: URL;push` (or `;replace`).
  const location = res.headers.get("location") ?? res.headers.get("x-action-redirect")?.replace(/;(push|replace)$/, "") ?? "";
  return { status: res.status, text: await res.text(), location };
}
