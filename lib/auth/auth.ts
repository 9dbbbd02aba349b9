import "server-only";
import { existsSync, readFileSync } from "node:fs";
import NextAuth, { CredentialsSignin, type NextAuthConfig } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { headers } from "next/headers";
import { safeRedirectPath } from "./redirect";
import { sourceAddress } from "./request";
import { signInWithPassword } from "@/lib/store/people/sign-in";
import { recordSignOut, signInWithSso, userForIdentity } from "@/lib/store/people/sessions";
import { activeUser } from "@/lib/store/people/users";

/** Idle timeout: a session unused this long ends. */
export const SESSION_IDLE_SECONDS = 30 * 60;
/** Absolute timeout: a session ends this long after sign-in, however busy. */
export const SESSION_ABSOLUTE_SECONDS = 12 * 60 * 60;

class WrongCredentials extends CredentialsSignin {
  code = "invalid";
}
class Throttled extends CredentialsSignin {
  constructor(minutes: number) {
    super();
    this.code = `throttled-${minutes}`;
  }
}

function secret(): string | undefined {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  // `npm start` creates one under ./data when none is configured.
  return existsSync("data/auth-secret") ? readFileSync("data/auth-secret", "utf8").trim() : undefined;
}

function oidcProvider(): NextAuthConfig["providers"] {
  const { AUTH_OIDC_ISSUER: issuer, AUTH_OIDC_ID: clientId, AUTH_OIDC_SECRET: clientSecret } = process.env;
  if (!issuer || !clientId || !clientSecret) return [];
  return [
    {
      id: "oidc",
      name: process.env.AUTH_OIDC_NAME || "single sign-on",
      type: "oidc",
      issuer,
      clientId,
      clientSecret,
      checks: ["pkce", "state", "nonce"],
      authorization: { params: { scope: "openid email profile" } },
    },
  ];
}

/** The client's address inside Auth.js's callbacks, which are not handed the request. */
async function requestSource(): Promise<string | null> {
  try {
    return sourceAddress(await headers());
  } catch {
    return null;
  }
}

type SessionToken = { uid?: unknown; sv?: unknown; loginAt?: unknown };

export const authConfig: NextAuthConfig = {
  secret: secret(),
  logger: {
    // A wrong password is not a server error: it is already a "signin.failed" security event
    // in the audit trail, so it needs no stack trace in the server log. Everything else is.
    error(error) {
      if (error instanceof CredentialsSignin || (error as { type?: string }).type === "CredentialsSignin") return;
      console.error(`[auth][error] ${error.name}: ${error.message}`);
      const cause = (error as { cause?: { err?: unknown } }).cause?.err;
      console.error(cause instanceof Error ? cause.stack : error.stack);
    },
  },
  trustHost: true,
  pages: { signIn: "/login", error: "/login" },
  session: { strategy: "jwt", maxAge: SESSION_IDLE_SECONDS, updateAge: 60 },
  providers: [
    Credentials({
      id: "credentials",
      credentials: { email: { type: "email" }, password: { type: "password" } },
      async authorize(credentials, request) {
        const email = typeof credentials?.email === "string" ? credentials.email : "";
        const password = typeof credentials?.password === "string" ? credentials.password : "";
        if (!email || !password) throw new WrongCredentials();
        const result = await signInWithPassword(email, password, sourceAddress(request.headers));
        if (result.ok) return { id: result.user.id, email: result.user.email, sessionVersion: result.user.sessionVersion };
        if (result.reason === "throttled") throw new Throttled(result.minutes);
        throw new WrongCredentials();
      },
    }),
    ...oidcProvider(),
  ],
  callbacks: {
    async signIn({ account, profile }) {
      if (account?.provider !== "oidc") return true;
      // Single sign-on: a verified email in an allowed domain, linked by issuer + subject
      // (lib/store/people/sessions.ts). A refusal goes back to the sign-in page, saying why.
      const result = await signInWithSso(
        { issuer: String(profile?.iss ?? ""), subject: String(profile?.sub ?? ""), email: typeof profile?.email === "string" ? profile.email : null, emailVerified: profile?.email_verified },
        await requestSource(),
      );
      return result.ok ? true : `/login?error=sso-${result.reason}`;
    },
    // Only ever to a path on this origin (lib/auth/redirect.ts), whatever callbackUrl said.
    redirect({ url, baseUrl }) {
      return baseUrl + safeRedirectPath(url, baseUrl);
    },
    async jwt({ token, user, account, profile }) {
      if (user) {
        // Who the session is, and the session version it must still match on every request.
        if (account?.provider === "oidc") {
          const local = await userForIdentity(String(profile?.iss ?? ""), String(profile?.sub ?? ""));
          if (!local) return null;
          Object.assign(token, { uid: local.id, sv: local.sessionVersion, email: local.email });
        } else {
          Object.assign(token, { uid: user.id, sv: (user as { sessionVersion?: number }).sessionVersion ?? 0 });
        }
        token.loginAt = Math.floor(Date.now() / 1000);
      }
      if (typeof token.loginAt !== "number" || Date.now() / 1000 - token.loginAt > SESSION_ABSOLUTE_SECONDS) return null;
      return token;
    },
    async session({ session, token }) {
      const t = token as SessionToken;
      session.user.id = String(t.uid);
      (session.user as { sessionVersion?: unknown }).sessionVersion = t.sv;
      // Roles are a project's, read fresh on every request (lib/auth/session.ts); an ended session is no one's.
      const user = await activeUser(String(t.uid));
      (session.user as { active?: boolean }).active = !!user && user.sessionVersion === t.sv;
      return session;
    },
  },
  events: {
    async signOut(message) {
      const token = ("token" in message ? message.token : null) as SessionToken | null;
      if (typeof token?.uid === "string" && typeof token.sv === "number") await recordSignOut(token.uid, token.sv, await requestSource());
    },
  },
};

export const { handlers, auth, signIn, signOut } = NextAuth(authConfig);
