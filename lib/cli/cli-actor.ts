/**
 * Who a command-line action is recorded as (the audit trail's actor, the Security log's "who"):
 * the command that did it, and the operating-system user when the environment names one —
 * `cli:users:add (alice)`, or `cli:users:add` where no user is set (a container), never
 * `cli:unknown`.
 */
export function cliActor(command: string, user: string | undefined = process.env.USER || process.env.USERNAME || process.env.LOGNAME): string {
  const who = user?.trim();
  return `cli:${command}${who ? ` (${who})` : ""}`;
}
