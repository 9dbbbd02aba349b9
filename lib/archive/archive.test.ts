import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PROJECT, parseSegmentCheckpoint, segmentKeys, segmentNdjson, sha256 } from "@/lib/domain/archive-segment";
import { chainHash, GENESIS_HASH, type ChainRecord } from "@/lib/domain/hash";
import { listSegments, readSegment, walkSegments, writeSegment } from "./segments";
import { openTarget, type ArchiveTarget } from "./targets";

const signer = generateKeyPairSync("ed25519").privateKey;
const other = generateKeyPairSync("ed25519").privateKey;

/** n records of one chain from seq 1, linked from the genesis hash. */
function chainOfRecords(n: number): ChainRecord[] {
  const out: ChainRecord[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const f = { seq, kind: "stage" as const, operation_id: `op-${seq % 3}`, recorded_at: `2026-11-0${1 + (seq % 3)}T10:00:00.000Z`, actor: "a@b.test", payload: { seq, text: "ünïcode" }, prev_hash: prev };
    const r = { ...f, hash: chainHash(f) };
    out.push(r);
    prev = r.hash;
  }
  return out;
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "reconcile-archive-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const meta = (prevHead: string) => ({ project: DEFAULT_PROJECT, chain: 0, prevHead, linked: false, signer });

/** The same checks on every kind of target. */
function behaves(name: string, open: () => ArchiveTarget) {
  describe(`${name} target`, () => {
    it("writes segments, reads them back, and walks them end to end", async () => {
      const t = open();
      const records = chainOfRecords(7);
      const a = await writeSegment(t, records.slice(0, 4), meta(GENESIS_HASH));
      const b = await writeSegment(t, records.slice(4), meta(records[3].hash));
      expect(a.location).toBe(t.locationOf("default/0/1-4.ndjson.gz"));
      expect(b.checkpoint).toMatchObject({ first_seq: 5, last_seq: 7, head_hash_at_last_seq: records[6].hash, prev_segment_head: records[3].hash, records: 3 });
      expect((await listSegments(t, "default", 0)).map((s) => [s.first_seq, s.last_seq])).toEqual([[1, 4], [5, 7]]);
      const walked: ChainRecord[] = [];
      for await (const s of walkSegments(t, "default", 0, { linked: false })) walked.push(...s.records);
      expect(walked).toEqual(records);
      // Rewriting an identical segment (a seal retried after a crash) is harmless.
      await writeSegment(t, records.slice(0, 4), meta(GENESIS_HASH));
      expect((await readSegment(t, "default/0/1-4.checkpoint.json", { linked: false, prevHead: GENESIS_HASH })).records).toEqual(records.slice(0, 4));
    });

    it("refuses a body swapped for another, a checkpoint signed by another key, and a gap between segments", async () => {
      const t = open();
      const records = chainOfRecords(6);
      await writeSegment(t, records.slice(0, 3), meta(GENESIS_HASH));
      const keys = segmentKeys({ project: "default", chain: 0, first_seq: 1, last_seq: 3 });
      const original = (await t.get(keys.body))!;
      // The same records, one payload changed: the body no longer matches the signed SHA-256.
      const forged = records.slice(0, 3).map((r, i) => (i === 1 ? { ...r, payload: { seq: 2, text: "changed" } } : r));
      await t.put(keys.body, gzipSync(segmentNdjson(forged)));
      await expect(readSegment(t, keys.checkpoint, { linked: false })).rejects.toThrow(/SHA-256 differs/);
      await t.put(keys.body, original);
      await expect(readSegment(t, keys.checkpoint, { linked: false, pinnedKey: "ed25519:AAAA" })).rejects.toThrow(/signature is not valid for the pinned key/);
      const cp = parseSegmentCheckpoint((await t.get(keys.checkpoint))!.toString())!;
      expect(cp.ndjson_sha256).toBe(sha256(segmentNdjson(records.slice(0, 3))));
      // Seq 4 was never sealed: segment 5-6 (signed by another key, too) does not continue from 3's head.
      await writeSegment(t, records.slice(4), { ...meta(records[4].prev_hash), signer: other });
      const walk = async (pinnedKey?: string) => {
        for await (const s of walkSegments(t, "default", 0, { linked: false, pinnedKey })) void s;
      };
      await expect(walk()).rejects.toThrow(/segment 0\/5-6: it does not continue from the head before it/);
      await expect(walk(cp.key)).rejects.toThrow(/segment 0\/5-6: its checkpoint's signature is not valid for the pinned key/);
    });
  });
}

behaves("directory", () => openTarget(`file://${tempDir()}`));

describe("directory target", () => {
  it("keeps keys inside the directory and names locations as file URLs", async () => {
    const dir = tempDir();
    const t = openTarget(`file://${dir}`);
    await expect(t.put("../escape/0/1-2.ndjson.gz", Buffer.from("x"))).rejects.toThrow(/no segment key/);
    await expect(t.get("default/0/../../x")).rejects.toThrow(/no segment key/);
    expect(await t.list("default/3/")).toEqual([]);
    const records = chainOfRecords(2);
    await writeSegment(t, records, meta(GENESIS_HASH));
    expect(JSON.parse(readFileSync(path.join(dir, "default/0/1-2.checkpoint.json"), "utf8"))).toMatchObject({ project: "default", chain: 0, first_seq: 1, last_seq: 2 });
    writeFileSync(path.join(dir, "default/0/1-2.checkpoint.json"), "{}");
    await expect(readSegment(t, "default/0/1-2.checkpoint.json", { linked: false })).rejects.toThrow(/no segment checkpoint/);
  });

  it("refuses what is no archive URL, with the reason", () => {
    expect(() => openTarget("ftp://x/y")).toThrow(/file:\/\/\/DIR or s3:\/\/BUCKET/);
    expect(() => openTarget("file://host/dir")).toThrow(/not a host/);
    expect(() => openTarget("s3://key:secret@bucket/p")).toThrow(/AWS_ACCESS_KEY_ID/);
    expect(() => openTarget("s3://B_/p")).toThrow(/no S3 bucket name/);
  });
});

describe("S3 (s3rver)", () => {
  let server: S3rver;
  let endpoint = "";
  const env = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_REGION: "us-east-1" };
  beforeAll(async () => {
    server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: tempDir() });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    const client = new S3Client({ endpoint, forcePathStyle: true, region: "us-east-1", credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } });
    await client.send(new CreateBucketCommand({ Bucket: "archive" }));
  });
  afterAll(async () => {
    await server?.close();
  });
  let n = 0;
  behaves("s3", () => openTarget(`s3://archive/reconcile-${++n}`, { ...env, AWS_ENDPOINT_URL: endpoint }));

  it("names locations by bucket and prefix", () => {
    expect(openTarget("s3://archive/a/b/", { ...env, AWS_ENDPOINT_URL: endpoint }).locationOf("default/0/1-2.ndjson.gz")).toBe("s3://archive/a/b/default/0/1-2.ndjson.gz");
  });
});
