/**
 * A real OpenID Connect provider for tests (the `oidc-provider` package, certified by the OpenID
 * Foundation) on 127.0.0.1: discovery, authorization code + PKCE, signed ID tokens, userinfo. Its
 * people are set by the test (`account(sub, claims)`), and its sign-in page is a plain form asking
 * which subject signs in; consent is granted with it. Reconcile talks to it over HTTP exactly as
 * it would to any identity provider.
 */
import { generateKeyPairSync } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Provider from "oidc-provider";

export type Claims = { email: string; email_verified: boolean | string };
export type TestProvider = {
  issuer: string;
  /** Adds or changes a person (their subject stays; their email may change, as at a real provider). */
  account: (sub: string, claims: Claims) => void;
  stop: () => Promise<void>;
};

export async function startOidcProvider(opts: { port: number; clientId: string; clientSecret: string; redirectUri: string }): Promise<TestProvider> {
  const issuer = `http://127.0.0.1:${opts.port}`;
  const people = new Map<string, Claims>();
  const key = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: opts.clientId,
        client_secret: opts.clientSecret,
        redirect_uris: [opts.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...key, kid: "test-signing-key", alg: "RS256", use: "sig" } as never] },
    cookies: { keys: ["a-test-only-cookie-signing-key"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    // Put the scope's claims (email, email_verified) in the ID token, as most providers do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Grant: 3600, Session: 3600 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const claims = people.get(sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...claims }) as never };
    },
  });

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const uid = /^\/interaction\/([^/?]+)/.exec(req.url ?? "")?.[1] ?? "";
    if (req.method === "GET") {
      const details = await provider.interactionDetails(req, res);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><html lang="en"><head><title>Test identity provider</title></head><body>
<h1>Test identity provider</h1><p>Client ${String(details.params.client_id)} asks who you are.</p>
<form method="post" action="/interaction/${uid}/login">
<label for="login">Subject</label> <input id="login" name="login" autocomplete="off">
<button type="submit">Continue</button></form></body></html>`);
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const accountId = new URLSearchParams(body).get("login") ?? "";
    if (!people.has(accountId)) {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(`no such test account: ${accountId}`);
      return;
    }
    const details = await provider.interactionDetails(req, res);
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  if (process.env.SSO_DEBUG) {
    for (const ev of ["grant.error", "authorization.error", "server_error"] as const) provider.on(ev as "server_error", (_ctx: unknown, err: Error & { error_description?: string }) => console.log(`[idp] ${ev}: ${err.message} ${err.error_description ?? ""}`));
    provider.use(async (ctx, next) => {
      await next();
      console.log(`[idp] ${ctx.method} ${ctx.url} -> ${ctx.status} ${ctx.response.get("location") ?? ""}`);
    });
  }
  const handle = provider.callback();
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/interaction/")) {
      interaction(req, res).catch((e) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(e));
      });
    } else {
      void handle(req, res);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", () => resolve());
  });
  return {
    issuer,
    account: (sub, claims) => people.set(sub, claims),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
