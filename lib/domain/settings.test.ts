import { describe, expect, it } from "vitest";
import { envSetting, NUMERIC_SETTINGS, numericSetting, settingProblems } from "./settings";

describe("numeric settings", () => {
  it("unset or blank is the default", () => {
    for (const [name, rule] of Object.entries(NUMERIC_SETTINGS)) {
      expect(numericSetting(name as keyof typeof NUMERIC_SETTINGS, undefined)).toBe(rule.default);
      expect(numericSetting(name as keyof typeof NUMERIC_SETTINGS, "  ")).toBe(rule.default);
    }
  });

  it("a value that means something is taken as written", () => {
    expect(numericSetting("RECONCILE_INGEST_QUEUE_MAX", "400")).toBe(400);
    expect(numericSetting("RECONCILE_VERIFIER_RETRY_MS", "2.5")).toBe(2.5);
    expect(numericSetting("RECONCILE_MAX_CLOCK_SKEW", "0")).toBe(0);
    expect(numericSetting("RECONCILE_WEBHOOK_SCHEDULE_SCALE", "0.001")).toBe(0.001);
    expect(numericSetting("RECONCILE_REVIEW_AGE_HOURS", " 48 ")).toBe(48);
  });

  it("a value that means nothing is refused, naming the setting, what it must be and the value", () => {
    expect(() => numericSetting("RECONCILE_INGEST_QUEUE_MAX", "20k")).toThrow('RECONCILE_INGEST_QUEUE_MAX must be a whole number ≥ 1, not "20k"');
    expect(() => numericSetting("RECONCILE_INGEST_QUEUE_MAX", "1.5")).toThrow(/whole number/);
    expect(() => numericSetting("RECONCILE_INGEST_QUEUE_MAX", "0")).toThrow(/≥ 1/);
    expect(() => numericSetting("RECONCILE_VERIFIER_CONCURRENCY", "-2")).toThrow(/RECONCILE_VERIFIER_CONCURRENCY/);
    expect(() => numericSetting("RECONCILE_VERIFIER_TIMEOUT_MS", "0")).toThrow('RECONCILE_VERIFIER_TIMEOUT_MS must be a number of milliseconds > 0, not "0"');
    expect(() => numericSetting("RECONCILE_MAX_CLOCK_SKEW", "-1")).toThrow('RECONCILE_MAX_CLOCK_SKEW must be a number of seconds ≥ 0, not "-1"');
    expect(() => numericSetting("RECONCILE_MAX_CLOCK_SKEW", "5 minutes")).toThrow(/seconds ≥ 0/);
    expect(() => numericSetting("RECONCILE_REVIEW_AGE_HOURS", "Infinity")).toThrow(/hours > 0/);
    expect(() => numericSetting("RECONCILE_WEBHOOK_SCHEDULE_SCALE", "0x10")).toThrow(/RECONCILE_WEBHOOK_SCHEDULE_SCALE/);
    expect(() => numericSetting("RECONCILE_WEBHOOK_CONCURRENCY", "1e400")).toThrow(/RECONCILE_WEBHOOK_CONCURRENCY/);
  });

  it("a setting with a largest value says so, and takes both ends", () => {
    expect(numericSetting("RECONCILE_CHAINS", "1")).toBe(1);
    expect(numericSetting("RECONCILE_CHAINS", "64")).toBe(64);
    expect(() => numericSetting("RECONCILE_CHAINS", "65")).toThrow('RECONCILE_CHAINS must be a whole number from 1 to 64, not "65"');
    expect(() => numericSetting("RECONCILE_CHAINS", "0x2")).toThrow(/RECONCILE_CHAINS/);
    expect(numericSetting("PORT", "0")).toBe(0);
    expect(() => numericSetting("PORT", "65536")).toThrow('PORT must be a whole number from 0 to 65535, not "65536"');
    expect(() => numericSetting("DATABASE_POOL_SIZE", "ten")).toThrow('DATABASE_POOL_SIZE must be a whole number ≥ 1, not "ten"');
    expect(numericSetting("KEEP_ALIVE_TIMEOUT_MS", "300000")).toBe(300_000);
    expect(numericSetting("RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS", "0")).toBe(0);
    expect(numericSetting("RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS", "0.5")).toBe(0.5);
    expect(() => numericSetting("RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS", "169")).toThrow(
      'RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS must be a number of hours from 0 to 168, not "169"',
    );
  });

  it("settingProblems names every setting that means nothing, and nothing else", () => {
    expect(settingProblems({})).toEqual([]);
    expect(settingProblems({ RECONCILE_INGEST_QUEUE_MAX: "400", RECONCILE_MAX_CLOCK_SKEW: "" })).toEqual([]);
    const problems = settingProblems({ RECONCILE_INGEST_QUEUE_MAX: "lots", RECONCILE_VERIFIER_RETRY_MS: "100", RECONCILE_REVIEW_AGE_HOURS: "-3", UNRELATED: "x" });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^RECONCILE_INGEST_QUEUE_MAX must be/);
    expect(problems[1]).toMatch(/^RECONCILE_REVIEW_AGE_HOURS must be/);
  });

  it("envSetting reads the setting from this process's environment", () => {
    const before = process.env.RECONCILE_VERIFIER_CONCURRENCY;
    try {
      process.env.RECONCILE_VERIFIER_CONCURRENCY = "3";
      expect(envSetting("RECONCILE_VERIFIER_CONCURRENCY")).toBe(3);
      process.env.RECONCILE_VERIFIER_CONCURRENCY = "three";
      expect(() => envSetting("RECONCILE_VERIFIER_CONCURRENCY")).toThrow(/RECONCILE_VERIFIER_CONCURRENCY/);
      delete process.env.RECONCILE_VERIFIER_CONCURRENCY;
      expect(envSetting("RECONCILE_VERIFIER_CONCURRENCY")).toBe(32);
    } finally {
      if (before === undefined) delete process.env.RECONCILE_VERIFIER_CONCURRENCY;
      else process.env.RECONCILE_VERIFIER_CONCURRENCY = before;
    }
  });
});
