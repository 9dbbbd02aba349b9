/** SCHEMA_ENGINE_DEBUG=1 traces the engine's log and every call it makes on the adapter. */
const debugEnabled = process.env.SCHEMA_ENGINE_DEBUG === "1";
export function debug(msg: string): void {
  if (debugEnabled) process.stderr.write(`[schema-engine] ${msg}\n`);
}

export function oneLine(sql: string): string {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat;
}
