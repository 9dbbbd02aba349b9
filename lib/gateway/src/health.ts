/**
 * What `GET /health` and the log say about the upstreams (docs/GATEWAY.md "Restarts"). Pure.
 */
export type UpstreamState = "starting" | "up" | "restarting" | "stopped";

export type UpstreamHealth = {
  state: UpstreamState;
  /** When it entered this state (ISO). */
  since: string;
  /** Starts after the first (each restart or reconnection attempt). */
  restarts: number;
  /** Why it is down (the exit or the error), while it is. */
  last_error: string | null;
  /** When the next start is due (ISO), while it is down. */
  next_attempt_at: string | null;
  /** Tools listed for it (known from its last start). */
  tools: number;
  /** A stdio upstream's process, while it runs. */
  pid: number | null;
};

export type Health = { status: "ok" | "degraded" | "down"; upstreams: Record<string, UpstreamHealth> };

/** ok: every upstream is up; down: none is; degraded: some are not. */
export function healthOf(upstreams: Record<string, UpstreamHealth>): Health {
  const states = Object.values(upstreams).map((u) => u.state);
  const up = states.filter((s) => s === "up").length;
  return { status: up === states.length ? "ok" : up === 0 ? "down" : "degraded", upstreams };
}

/** One log line: which upstreams are up, which are not and why. */
export function healthLine(h: Health): string {
  const entries = Object.entries(h.upstreams);
  const up = entries.filter(([, u]) => u.state === "up").map(([n]) => n);
  const down = entries.filter(([, u]) => u.state !== "up").map(([n, u]) => `${n} (${u.state}${u.last_error ? `: ${u.last_error}` : ""}${u.next_attempt_at ? `; next attempt ${u.next_attempt_at}` : ""})`);
  return `upstreams up: ${up.length ? up.join(", ") : "none"}${down.length ? `; not up: ${down.join(", ")}` : ""}`;
}
