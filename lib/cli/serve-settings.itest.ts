import { expect, it } from "vitest";
import { prepareDatabase } from "@/lib/reliability/harness";
import { ownSqliteServers } from "@/lib/testing/own-server";

/**
 * The numeric settings (lib/domain/settings.ts) are read when the production server starts
 * (lib/cli/serve.ts): values that mean nothing stop the start, naming every one, instead of
 * failing every ingest request later (RECONCILE_MAX_CLOCK_SKEW did) or being replaced by the
 * default without a word (the others were). A value that means something is the one applied.
 * RECONCILE_CHECKPOINT_EVERY, a setting of another kind, is checked at start too.
 */
const servers = ownSqliteServers("serve-settings");

it.each(["5 minutes", "-1", "NaN"])("RECONCILE_MAX_CLOCK_SKEW=%j stops the server from starting, naming the setting", async (value) => {
  const url = servers.url(`bad-${value.replace(/\W/g, "_")}`);
  await prepareDatabase(url, "bad");
  await expect(servers.start(url, { RECONCILE_MAX_CLOCK_SKEW: value })).rejects.toThrow(/RECONCILE_MAX_CLOCK_SKEW must be a number of seconds ≥ 0, not/);
});

it("several settings that mean nothing are all named at once, of every kind", async () => {
  const url = servers.url("several");
  await prepareDatabase(url, "several");
  const start = servers.start(url, {
    RECONCILE_INGEST_QUEUE_MAX: "20k",
    RECONCILE_VERIFIER_TIMEOUT_MS: "10s",
    RECONCILE_CHAINS: "0",
    RECONCILE_CHECKPOINT_EVERY: "hourly",
    RECONCILE_REVIEW_AGE_HOURS: "48",
  });
  await expect(start).rejects.toThrow(/4 settings mean nothing/);
  await expect(start).rejects.toThrow(/RECONCILE_INGEST_QUEUE_MAX must be a whole number ≥ 1, not "20k"/);
  await expect(start).rejects.toThrow(/RECONCILE_VERIFIER_TIMEOUT_MS must be a number of milliseconds > 0, not "10s"/);
  await expect(start).rejects.toThrow(/RECONCILE_CHAINS must be a whole number from 1 to 64, not "0"/);
  await expect(start).rejects.toThrow(/RECONCILE_CHECKPOINT_EVERY: "hourly" is neither/);
  // Said as it is: no stack trace for a setting.
  await expect(start).rejects.not.toThrow(/\n\s+at /);
});

it("a valid RECONCILE_MAX_CLOCK_SKEW is the bound ingest applies", async () => {
  const url = servers.url("ten");
  const { tokens } = await prepareDatabase(url, "ten");
  const app = await servers.start(url, { RECONCILE_MAX_CLOCK_SKEW: "10" });
  const send = async (id: string, aheadSeconds: number) => {
    const record = { operation_id: id, receipt: { status: "accepted", observed_at: new Date(Date.now() + aheadSeconds * 1000).toISOString() } };
    const res = await fetch(`${app.base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" }, body: JSON.stringify(record) });
    return { status: res.status, body: (await res.json()) as { error?: { code?: string } } };
  };
  expect((await send("skew-near", 2)).status).toBe(201);
  // Within the default five minutes, beyond the ten seconds set here.
  const far = await send("skew-far", 60);
  expect(far.status).toBe(422);
  expect(JSON.stringify(far.body)).toContain("observed_in_future");
});

it("a RECONCILE_CHECKPOINT_EVERY that means nothing stops the server from starting, naming it", async () => {
  const url = servers.url("bad-checkpoint-every");
  await prepareDatabase(url, "bad");
  await expect(servers.start(url, { RECONCILE_CHECKPOINT_EVERY: "15 minutes" })).rejects.toThrow(/RECONCILE_CHECKPOINT_EVERY: "15 minutes" is neither/);
});

it("a RECONCILE_VERDICT_OTLP_ENDPOINT the export could never use stops the start, naming it and what would allow it", async () => {
  const url = servers.url("bad-verdict-endpoint");
  await prepareDatabase(url, "bad");
  const start = servers.start(url, { RECONCILE_VERDICT_OTLP_ENDPOINT: "http://collector.internal:4318", RECONCILE_VERDICT_OTLP_TIMEOUT_MS: "soon" });
  await expect(start).rejects.toThrow(/2 settings mean nothing/);
  await expect(start).rejects.toThrow(/RECONCILE_VERDICT_OTLP_ENDPOINT: scheme_not_allowed: plain http to collector.internal:4318 is not allowed: only https \(RECONCILE_VERDICT_ALLOW_HTTP=1 allows http/);
  await expect(start).rejects.toThrow(/RECONCILE_VERDICT_OTLP_TIMEOUT_MS must be a number of milliseconds > 0, not "soon"/);
});

it("a Phoenix or Langfuse verdict target the outbound rules refuse stops the start, naming the setting and the rule (issue 52)", async () => {
  const url = servers.url("bad-verdict-vendors");
  await prepareDatabase(url, "bad");
  const start = servers.start(url, {
    RECONCILE_VERDICT_PHOENIX_URL: "https://169.254.169.254/phoenix",
    RECONCILE_VERDICT_LANGFUSE_URL: "http://langfuse.internal:3000",
    RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY: "pk-lf-x",
  });
  await expect(start).rejects.toThrow(/3 settings mean nothing/);
  await expect(start).rejects.toThrow(/RECONCILE_VERDICT_PHOENIX_URL: private_address: 169.254.169.254 may not be reached/);
  await expect(start).rejects.toThrow(/RECONCILE_VERDICT_LANGFUSE_URL: scheme_not_allowed: plain http to langfuse.internal:3000 is not allowed/);
  await expect(start).rejects.toThrow(/RECONCILE_VERDICT_LANGFUSE_URL is set without RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY and RECONCILE_VERDICT_LANGFUSE_SECRET_KEY/);
});

it("LOG_LEVEL, RECONCILE_METRICS_PORT and a RECONCILE_VERIFIER_ENV naming the server's own configuration stop the server from starting, naming each", async () => {
  const url = servers.url("bad-observability");
  await prepareDatabase(url, "bad");
  const start = servers.start(url, { LOG_LEVEL: "loud", RECONCILE_METRICS_PORT: "9464x", RECONCILE_VERIFIER_ENV: "X_READ_TOKEN,DATABASE_URL" });
  await expect(start).rejects.toThrow(/3 settings mean nothing/);
  await expect(start).rejects.toThrow(/RECONCILE_VERIFIER_ENV names DATABASE_URL: the server's own configuration is never sent to another host/);
  await expect(start).rejects.toThrow(/LOG_LEVEL=loud is not one of fatal, error, warn, info, debug, trace, silent/);
  await expect(start).rejects.toThrow(/RECONCILE_METRICS_PORT=9464x is not a port/);
});

it("retention without an archive, or an archive that is no URL, stops the server from starting, naming them", async () => {
  const url = servers.url("bad-retention");
  await prepareDatabase(url, "bad");
  await expect(servers.start(url, { RECONCILE_RETENTION_DAYS: "400" })).rejects.toThrow(/RECONCILE_RETENTION_DAYS is set but RECONCILE_ARCHIVE_URL is not/);
  await expect(servers.start(url, { RECONCILE_RETENTION_DAYS: "forever", RECONCILE_ARCHIVE_URL: "file:///tmp/a" })).rejects.toThrow(/RECONCILE_RETENTION_DAYS must be a whole number of days/);
  await expect(servers.start(url, { RECONCILE_RETENTION_DAYS: "30", RECONCILE_ARCHIVE_URL: "ftp://x/y" })).rejects.toThrow(/RECONCILE_ARCHIVE_URL must be file:\/\/\/DIR or s3:\/\/BUCKET\/PREFIX/);
});
