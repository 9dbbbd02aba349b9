import { describe, expect, it } from "vitest";
import { checkSealedRows, sealedClaimOf, type SealedClaim, type SealedRow } from "./sealed-rows";

const H1 = "a".repeat(64);
const H2 = "b".repeat(64);
const row = (first_seq: number, last_seq: number, head_hash = H1, chain = 0): SealedRow => ({ chain, first_seq, last_seq, head_hash });
const claim = (seq: number, r: SealedRow): SealedClaim => ({ seq, ...r });
const on = { chains: 1, retentionOff: null, archived: null } as const;

describe("sealed_through rows held to archive.sealed records", () => {
  it("passes rows retention wrote: each named by a record after it, the earlier ones' records sealed in turn", () => {
    const a = row(1, 10);
    const b = row(11, 20, H2);
    expect(checkSealedRows([a, b], { ...on, live: [claim(25, b)] })).toEqual({ ok: true, rows: 2, unchecked: 1 });
    expect(checkSealedRows([a, b], { ...on, live: [claim(25, b)], archived: [claim(12, a)] })).toEqual({ ok: true, rows: 2, unchecked: 0 });
    expect(checkSealedRows([], { ...on, retentionOff: "retention is off", live: [] })).toEqual({ ok: true, rows: 0, unchecked: 0 });
  });

  it("refuses the issue's row: a whole range no archive.sealed record names", () => {
    const forged = row(1, 999_999_999);
    const v = checkSealedRows([forged], { ...on, live: [] });
    expect(v).toMatchObject({ ok: false, problem: expect.stringMatching(/chain 0 seq 1-999999999 is named by no chained archive.sealed record/) });
  });

  it("refuses any row where retention or the archive is off, naming why", () => {
    const a = row(1, 10);
    const v = checkSealedRows([a], { ...on, retentionOff: "RECONCILE_ARCHIVE_URL is not set", live: [claim(11, a)] });
    expect(v).toMatchObject({ ok: false, problem: expect.stringMatching(/1 row\(s\) \(the first: chain 0 seq 1-10\), but RECONCILE_ARCHIVE_URL is not set/) });
  });

  it("refuses another chain, a database of several chains, a gap, a different head, a record before its range, and an earlier row the archive does not name", () => {
    const a = row(1, 10);
    expect(checkSealedRows([row(1, 10, H1, 7)], { ...on, live: [] })).toMatchObject({ ok: false, problem: expect.stringMatching(/chain 0 only/) });
    expect(checkSealedRows([a], { ...on, chains: 4, live: [claim(11, a)] })).toMatchObject({ ok: false, problem: expect.stringMatching(/4 chains/) });
    expect(checkSealedRows([row(2, 10)], { ...on, live: [claim(11, row(2, 10))] })).toMatchObject({ ok: false, problem: expect.stringMatching(/should start at seq 1/) });
    expect(checkSealedRows([a, row(12, 20)], { ...on, live: [claim(21, row(12, 20))] })).toMatchObject({ ok: false, problem: expect.stringMatching(/should start at seq 11/) });
    expect(checkSealedRows([a], { ...on, live: [claim(11, row(1, 10, H2))] })).toMatchObject({ ok: false, problem: expect.stringMatching(/names head b{64}/) });
    expect(checkSealedRows([a], { ...on, live: [claim(5, a)] })).toMatchObject({ ok: false, problem: expect.stringMatching(/named by no chained/) });
    const b = row(11, 20);
    expect(checkSealedRows([a, b], { ...on, live: [claim(21, b)], archived: [] })).toMatchObject({ ok: false, problem: expect.stringMatching(/seq 1-10 .*in the live chain or the archive/) });
  });

  it("reads a claim only from an archive.sealed payload of whole numbers", () => {
    expect(sealedClaimOf(5, { type: "archive.sealed", chain: 0, first_seq: 1, last_seq: 4, head_hash: H1, records: 4 })).toEqual({ seq: 5, chain: 0, first_seq: 1, last_seq: 4, head_hash: H1 });
    expect(sealedClaimOf(5, { type: "export.created", chain: 0, first_seq: 1, last_seq: 4, head_hash: H1 })).toBeNull();
    expect(sealedClaimOf(5, { type: "archive.sealed", chain: "0", first_seq: 1, last_seq: 4, head_hash: H1 })).toBeNull();
    expect(sealedClaimOf(5, null)).toBeNull();
  });
});
