/**
 * The operation record the ingest benchmarks send (bench:ingest over HTTP, bench:hot to the pure
 * steps): one complete call, four stage records once split, ~700 bytes of JSON.
 */
export function benchRecord(id: string, trajectory: string) {
  return {
    operation_id: id,
    trajectory_id: trajectory,
    tool: { name: "social.publish", version: "2" },
    agent: { name: "bench", version: "1" },
    claimed_outcome: "success",
    intent: { target: "social account", effect: "publish exactly one post", fingerprint: `sha256:${id}`, params: { text: `post ${id}` } },
    receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: "2026-08-28T10:00:00Z", params: { text: `post ${id}` } },
    canonical_read: { status: "match", observed_at: "2026-08-28T10:01:00Z", evidence: { object_id: `o-${id}`, fingerprint: `sha256:${id}` } },
    side_effects: [{ name: "quota decrement", status: "observed" }],
  };
}
