import { describe, expect, it } from "vitest";
import { EMPTY_HEAD, type ChainHead } from "./chains";
import { GuessPolicy, MIN_GUESSED_RECORDS, MISSES_BEFORE_BACKING_OFF, PROBE_EVERY, predictHead, sameHead, type Written } from "./speculation";

const head = (seq: number, tag = "x"): ChainHead => ({ seq, hash: `${tag}${seq}`.padEnd(64, "0"), records: seq });
const written = (start: ChainHead, end: ChainHead, ids: string[]): Written => ({ start, end, ids: new Set(ids) });

describe("the head a speculated group must find under the chain lock", () => {
  it("is the snapshot's own head when nothing of this lane is committing", () => {
    expect(predictHead(head(7), ["a"], null)).toEqual(head(7));
    expect(predictHead(EMPTY_HEAD, ["a"], null)).toEqual(EMPTY_HEAD);
  });

  it("is the snapshot's head when the snapshot already holds the previous transaction (its end, or later)", () => {
    const before = written(head(7), head(9), ["a"]);
    // Committed before the snapshot: even an operation it named was read with its records.
    expect(predictHead(head(9), ["a"], before)).toEqual(head(9));
    expect(predictHead(head(12), ["a", "b"], before)).toEqual(head(12));
  });

  it("is the previous transaction's end when the snapshot was taken before it committed", () => {
    const before = written(head(7), head(9), ["a", "b"]);
    expect(predictHead(head(7), ["c", "d"], before)).toEqual(head(9));
  });

  it("is refused when that uncommitted transaction named one of the group's operations (its records are not in the snapshot)", () => {
    const before = written(head(7), head(9), ["a", "b"]);
    expect(predictHead(head(7), ["c", "b"], before)).toBeNull();
  });

  it("is the snapshot's head when the previous transaction appended nothing", () => {
    const before = written(head(7), head(7), ["a"]);
    expect(predictHead(head(7), ["a"], before)).toEqual(head(7));
  });

  it("tells heads apart by seq and hash, never by seq alone (another instance's record at the same seq)", () => {
    expect(sameHead(head(7, "x"), head(7, "x"))).toBe(true);
    expect(sameHead(head(7, "x"), head(7, "y"))).toBe(false);
    expect(sameHead(head(7), head(8))).toBe(false);
    // A snapshot at seq 7 of another history is not the previous transaction's start.
    const before = written(head(7, "x"), head(9, "x"), ["a"]);
    expect(predictHead(head(7, "y"), ["a"], before)).toEqual(head(7, "y"));
  });
});

describe("when a lane guesses", () => {
  it("never for a group too small to be worth a snapshot", () => {
    const policy = new GuessPolicy();
    expect(policy.shouldGuess(MIN_GUESSED_RECORDS - 1)).toBe(false);
    expect(policy.shouldGuess(MIN_GUESSED_RECORDS)).toBe(true);
    expect(policy.shouldGuess(2000)).toBe(true);
  });

  it("after misses in a row (another instance on the chain), only as a probe now and then, until one holds", () => {
    const policy = new GuessPolicy();
    for (let i = 0; i < MISSES_BEFORE_BACKING_OFF; i++) {
      expect(policy.shouldGuess(100)).toBe(true);
      policy.heard("missed");
    }
    const guesses = Array.from({ length: PROBE_EVERY * 3 }, () => policy.shouldGuess(100));
    expect(guesses.filter(Boolean)).toHaveLength(3);
    expect(guesses[PROBE_EVERY - 1]).toBe(true);
    // A probe that holds: back to guessing every group.
    policy.heard("held");
    expect(Array.from({ length: 5 }, () => policy.shouldGuess(100))).toEqual([true, true, true, true, true]);
  });

  it("a miss between hits does not back off", () => {
    const policy = new GuessPolicy();
    for (let i = 0; i < 20; i++) {
      expect(policy.shouldGuess(100)).toBe(true);
      policy.heard(i % 2 ? "held" : "missed");
    }
  });
});
