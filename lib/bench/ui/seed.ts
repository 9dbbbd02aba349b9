/** Seeding bench:ui's database through the real ingest use case (`ingestRecords`). */
import { operationRecordSchema } from "@/lib/domain/wire";
import { systemSender } from "@/lib/domain/trust";
import { ingestRecords, type ValidRecord } from "@/lib/store/ingest-records";
import { Generator, LATE_READ, type Rec } from "./generator";
import { fmtTime, log } from "./log";

export async function seed(total: number, batchSize: number): Promise<{ seconds: number; records: number; stages: number }> {
  const gen = new Generator(total);
  const late: { due: number; rec: Rec }[] = [];
  let batchNo = 0;
  let records = 0;
  let stages = 0;
  const t0 = performance.now();
  let lastReport = t0;
  while (gen.count < total || late.length) {
    const batch: Rec[] = [];
    while (late.length && late[0].due <= batchNo && batch.length < batchSize) batch.push(late.shift()!.rec);
    while (gen.count < total && batch.length < batchSize) {
      const { first, late: l } = gen.next();
      batch.push(first);
      if (l) late.push({ due: batchNo + 2, rec: l });
    }
    if (!batch.length) {
      batchNo++; // only late reads left, not due yet
      continue;
    }
    // What POST /api/v1/receipts does before ingest: validate every record against the wire schema.
    const valid: ValidRecord[] = batch.map((raw, index) => {
      const parsed = operationRecordSchema.safeParse(raw);
      if (!parsed.success) throw new Error(`generated record ${String(raw.operation_id)} is invalid: ${parsed.error.message}`);
      return { index, operationId: raw.operation_id as string, raw, sender: systemSender("bench-ui") };
    });
    const results = await ingestRecords(valid);
    const failed = results.find((r) => "error" in r);
    if (failed) throw new Error(`ingest refused a generated record: ${JSON.stringify(failed)}`);
    records += batch.length;
    for (const raw of batch) {
      const reads = raw.canonical_read;
      stages += (raw.intent ? 1 : 0) + (raw.receipt ? 1 : 0) + (Array.isArray(reads) ? reads.length : 0) + (raw.side_effects ? 1 : 0);
    }
    batchNo++;
    const now = performance.now();
    if (now - lastReport > 5000 || (gen.count >= total && !late.length)) {
      lastReport = now;
      const secs = (now - t0) / 1000;
      const rate = records / secs;
      const remaining = total - gen.count + late.length + Math.round((total - gen.count) * LATE_READ * 0.9);
      log(
        `  seeded ${gen.count.toLocaleString()}/${total.toLocaleString()} operations · ${records.toLocaleString()} records · ` +
          `${Math.round(rate).toLocaleString()} records/s · ${fmtTime(secs)} elapsed · ETA ${fmtTime(remaining / rate)}`,
      );
    }
  }
  return { seconds: (performance.now() - t0) / 1000, records, stages };
}
