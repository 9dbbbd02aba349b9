import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Journal } from "./journal";

const DEAD = 4_000_000; // above Linux's pid_max: no such process
const rec = (id: string, stage = "intent") => ({ operation_id: id, ...(stage === "intent" ? { intent: {} } : { receipt: { status: "accepted" as const } }) });

describe("the gateway's journal", () => {
  it("adopts a dead gateway's records (never a withdrawn call's), and leaves a live one's alone", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "journal-"));
    const lines = [rec("a"), rec("a", "receipt"), rec("b"), { withdrawn: "b" }, rec("c")].map((l) => JSON.stringify(l)).join("\n");
    writeFileSync(path.join(dir, `journal-${DEAD}-0.ndjson`), lines + '\n{"operation_id":"torn');
    writeFileSync(path.join(dir, `journal-${DEAD}-1.ndjson`), JSON.stringify(rec("d")) + "\n");
    writeFileSync(path.join(dir, `journal-${process.ppid}-0.ndjson`), JSON.stringify(rec("live")) + "\n");
    const j = new Journal(dir);
    expect(j.adopt().map((r) => r.operation_id)).toEqual(["a", "a", "c", "d"]);
    // Now in this process's own journal, so a crash while resending loses nothing.
    expect(readdirSync(dir).sort()).toEqual([`journal-${process.pid}-0.ndjson`, `journal-${process.ppid}-0.ndjson`].sort());
    expect(readFileSync(j.file!, "utf8").trim().split("\n")).toHaveLength(4);
  });

  it("deletes sealed segments only once told they were delivered; what came after stays", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "journal-"));
    const j = new Journal(dir);
    j.append(rec("x"));
    const first = j.file!;
    j.seal();
    j.append(rec("y"));
    expect(existsSync(first)).toBe(true);
    j.delivered();
    expect(existsSync(first)).toBe(false);
    expect(readFileSync(j.file!, "utf8")).toContain('"y"');
    // Nothing written since: the segment stays the one being written, and nothing is deleted.
    const current = j.file!;
    j.seal();
    j.seal();
    expect(j.file).not.toBe(current);
    j.delivered();
    expect(existsSync(current)).toBe(false);
    const empty = new Journal(mkdtempSync(path.join(tmpdir(), "journal-")));
    const before = empty.file;
    empty.seal();
    expect(empty.file).toBe(before);
  });

  it("keeps nothing on disk without a folder", () => {
    const j = new Journal(null);
    j.append(rec("x"));
    expect(j.file).toBeNull();
    expect(j.adopt()).toEqual([]);
  });
});
