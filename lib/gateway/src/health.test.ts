import { describe, expect, it } from "vitest";
import { healthLine, healthOf, type UpstreamHealth } from "./health";

const u = (state: UpstreamHealth["state"], extra: Partial<UpstreamHealth> = {}): UpstreamHealth => ({
  state,
  since: "2026-01-01T00:00:00.000Z",
  restarts: 0,
  last_error: null,
  next_attempt_at: null,
  tools: 3,
  pid: null,
  ...extra,
});

describe("the upstreams' health", () => {
  it("is ok with every upstream up, degraded with some, down with none", () => {
    expect(healthOf({ a: u("up"), b: u("up") }).status).toBe("ok");
    expect(healthOf({ a: u("up"), b: u("restarting") }).status).toBe("degraded");
    expect(healthOf({ a: u("starting"), b: u("restarting") }).status).toBe("down");
  });

  it("says in one line which are up and which are not, why, and when the next attempt is", () => {
    const line = healthLine(healthOf({ a: u("up"), b: u("restarting", { last_error: "exited with code 1", next_attempt_at: "2026-01-01T00:00:04.000Z" }) }));
    expect(line).toBe("upstreams up: a; not up: b (restarting: exited with code 1; next attempt 2026-01-01T00:00:04.000Z)");
    expect(healthLine(healthOf({ b: u("restarting") }))).toBe("upstreams up: none; not up: b (restarting)");
  });
});
