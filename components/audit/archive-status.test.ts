import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ArchiveStatus, type ArchiveStatusProps } from "./archive-status";

const render = (p: ArchiveStatusProps) => renderToStaticMarkup(createElement(ArchiveStatus, p)).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
const segment = (first: number, last: number, day: string) => ({
  chain: 0,
  first_seq: first,
  last_seq: last,
  head_hash: "ab".repeat(32),
  records: last - first + 1,
  location: `file:///var/archive/default/0/${first}-${last}.ndjson.gz`,
  sha256: "cd".repeat(32),
  sealed_at: `${day}T00:10:00.000Z`,
});

describe("the audit page's retention panel", () => {
  it("says retention is off, and that nothing was archived, when it is", () => {
    const text = render({ retention: null, archiveUrl: null, problem: null, segments: [] });
    expect(text).toMatch(/Retention is off: every record of this project stays in the database/);
    expect(text).toMatch(/RECONCILE_ARCHIVE_URL/);
    expect(text).toMatch(/Nothing has been archived yet/);
  });

  it("names whose setting the retention is, and shows the form it is given (its admins')", () => {
    const server = render({ retention: { days: 400, from: "instance" }, archiveUrl: "s3://a/r", problem: null, segments: [] });
    expect(server).toMatch(/Retention is on for this project \(the server.{1,6}s default, RECONCILE_RETENTION_DAYS\): each day, records older than 400 whole days/);
    const own = render({ retention: { days: 30, from: "project" }, editor: createElement("form", null, "the editor"), archiveUrl: "s3://a/r", problem: null, segments: [] });
    expect(own).toMatch(/\(its own setting\): each day, records older than 30 whole days/);
    expect(own).toContain("the editor");
  });

  it("lists what was sealed, through which seq, when and where, newest first", () => {
    const text = render({ retention: { days: 400, from: "project" }, archiveUrl: "s3://archive/reconcile", problem: null, segments: [segment(1, 40, "2026-11-01"), segment(41, 90, "2026-11-02")] });
    expect(text).toMatch(/older than 400 whole days are sealed into s3:\/\/archive\/reconcile/);
    expect(text).toMatch(/Sealed through seq 90 : 90 records in 2 segments, the last on 2026-11-02 00:10:00 UTC/);
    expect(text.indexOf("41–90")).toBeLessThan(text.indexOf("1–40"));
    expect(text).toContain("file:///var/archive/default/0/41-90.ndjson.gz");
  });

  it("says when the settings mean nothing", () => {
    expect(render({ retention: null, archiveUrl: null, problem: "RECONCILE_ARCHIVE_URL is not set", segments: [] })).toMatch(/The retention settings mean nothing: RECONCILE_ARCHIVE_URL is not set/);
  });
});
