import "server-only";
import { existsSync, readFileSync } from "node:fs";
import NextAuth, { CredentialsSignin, type NextAuthConfig } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { sourceAddress } from "./request";
import { signInWithPassword } from "@/lib/store/sign-in";
import { recordSignOut, userForSso } from "@/lib/store/sessions";
import { activeUser } from "@/lib/store/users";

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
  return [{ id: "oidc", name: process.env.AUTH_OIDC_NAME || "single sign-on", type: "oidc", issuer, clientId, clientSecret }];
}

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
        if (result.ok) return { id: result.user.id, email: result.user.email, role: result.user.role };
        if (result.reason === "throttled") throw new Throttled(result.minutes);
        throw new WrongCredentials();
      },
    }),
    ...oidcProvider(),
  ],
  callbacks: {
    async signIn({ user, account }) {
      if (account?.provider !== "oidc") return true;
      // Single sign-on is matched to a user by email; a first sign-in creates one.
      return Boolean(user.email && (await userForSso(user.email)));
    },
    async jwt({ token, user, account }) {
      if (user) {
        const local = account?.provider === "oidc" ? await userForSso(user.email!) : null;
        token.uid = local?.id ?? user.id;
        token.loginAt = Math.floor(Date.now() / 1000);
      }
      if (typeof token.loginAt !== "number" || Date.now() / 1000 - token.loginAt > SESSION_ABSOLUTE_SECONDS) return null;
      return token;
    },
    async session({ session, token }) {
      session.user.id = String(token.uid);
      // The role is read fresh, never trusted from the cookie.
      const user = await activeUser(String(token.uid));
      (session.user as { role?: string | null }).role = user?.role ?? null;
      return session;
    },
  },
  events: {
    async signOut(message) {
      const token = "token" in message ? message.token : null;
      if (token?.email) await recordSignOut(token.email);
    },
  },
};

export const { handlers, auth, signIn, signOut } = NextAuth(authConfig);
