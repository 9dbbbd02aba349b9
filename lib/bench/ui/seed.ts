/** Seeding bench:ui's database through the real ingest use case (`ingestRecords`). */
import { operationRecordSchema } from "@/lib/domain/wire";
import { systemSender } from "@/lib/domain/trust";
import { ingestRecords, type ValidRecord } from "@/lib/store/ingest/records";
import { Generator, LATE_READ, type Rec } from "./generator";
import { fmtTime, log } from "./log";

/**
 * The generator's operations as ingest batches: each batch takes the late reads that are due,
 * then new operations. `records` and `stages` count what the batches carried.
 */
export class Feeder {
  private readonly gen: Generator;
  private readonly late: { due: number; rec: Rec }[] = [];
  private batchNo = 0;
  records = 0;
  stages = 0;

  constructor(
    readonly total: number,
    seedValue?: number,
    spanMs?: number,
  ) {
    this.gen = new Generator(total, seedValue, spanMs);
  }

  /** Operations made so far. */
  get made() {
    return this.gen.count;
  }
  get lateLeft() {
    return this.late.length;
  }
  get done() {
    return this.gen.count >= this.total && !this.late.length;
  }

  /** The next batch, at most `size` records and at most `limit` operations made (null when nothing is left). */
  next(size: number, limit = this.total): Rec[] | null {
    for (;;) {
      const batch: Rec[] = [];
      while (this.late.length && this.late[0].due <= this.batchNo && batch.length < size) batch.push(this.late.shift()!.rec);
      while (this.gen.count < Math.min(limit, this.total) && batch.length < size) {
        const { first, late } = this.gen.next();
        batch.push(first);
        if (late) this.late.push({ due: this.batchNo + 2, rec: late });
      }
      this.batchNo++;
      if (batch.length) {
        this.records += batch.length;
        for (const raw of batch) {
          const reads = raw.canonical_read;
          this.stages += (raw.intent ? 1 : 0) + (raw.receipt ? 1 : 0) + (Array.isArray(reads) ? reads.length : 0) + (raw.side_effects ? 1 : 0);
        }
        return batch;
      }
      if (!this.late.length) return null;
      // only late reads left, not due yet
    }
  }
}

/** What POST /api/v1/receipts does: validate every record against the wire schema, then ingestRecords. */
export async function ingestBatch(batch: Rec[], who = "bench-ui"): Promise<void> {
  const valid: ValidRecord[] = batch.map((raw, index) => {
    const parsed = operationRecordSchema.safeParse(raw);
    if (!parsed.success) throw new Error(`generated record ${String(raw.operation_id)} is invalid: ${parsed.error.message}`);
    return { index, operationId: raw.operation_id as string, raw, sender: systemSender(who) };
  });
  const results = await ingestRecords(valid);
  const failed = results.find((r) => "error" in r);
  if (failed) throw new Error(`ingest refused a generated record: ${JSON.stringify(failed)}`);
}

export async function seed(total: number, batchSize: number): Promise<{ seconds: number; records: number; stages: number }> {
  const feed = new Feeder(total);
  const t0 = performance.now();
  let lastReport = t0;
  for (let batch = feed.next(batchSize); batch; batch = feed.next(batchSize)) {
    await ingestBatch(batch);
    const now = performance.now();
    if (now - lastReport > 5000 || feed.done) {
      lastReport = now;
      const secs = (now - t0) / 1000;
      const rate = feed.records / secs;
      const remaining = total - feed.made + feed.lateLeft + Math.round((total - feed.made) * LATE_READ * 0.9);
      log(
        `  seeded ${feed.made.toLocaleString()}/${total.toLocaleString()} operations · ${feed.records.toLocaleString()} records · ` +
          `${Math.round(rate).toLocaleString()} records/s · ${fmtTime(secs)} elapsed · ETA ${fmtTime(remaining / rate)}`,
      );
    }
  }
  return { seconds: (performance.now() - t0) / 1000, records: feed.records, stages: feed.stages };
}
