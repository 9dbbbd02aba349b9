/** Progress goes to stderr; the report (stdout) stays clean for a file. */
export const log = (msg: string) => process.stderr.write(`${msg}\n`);

export const fmtTime = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
