import { existsSync, readFileSync } from "node:fs";

/** The server's secret that stored secrets are sealed under (the same one Auth.js uses). */
export function serverSecret(): string {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  if (existsSync("data/auth-secret")) return readFileSync("data/auth-secret", "utf8").trim();
  throw new Error("stored secrets need AUTH_SECRET (npm start creates one under ./data)");
}
