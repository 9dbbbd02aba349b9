import pino, { type Logger } from "pino";

/**
 * The server's structured log: JSON lines on stdout (pino), level from LOG_LEVEL (info by
 * default; `silent` turns it off). One logger per process, on globalThis so that the server and
 * Next.js's bundle write through the same one.
 */
const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export function logLevel(env: string | undefined = process.env.LOG_LEVEL): string {
  const level = (env ?? "").trim().toLowerCase();
  return LEVELS.includes(level) ? level : "info";
}

const root = globalThis as unknown as { __reconcileLog?: Logger };

export function log(): Logger {
  return (root.__reconcileLog ??= pino({ level: logLevel(), base: { service: "reconcile" }, timestamp: pino.stdTimeFunctions.isoTime }));
}
