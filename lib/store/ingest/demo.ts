import "server-only";
import { demoRecords, DEMO_ESSAY_OPERATION_ID } from "@/lib/domain/demo-data";
import { writeCheckpoint } from "../chain/checkpoints";
import { reader } from "../db/db";
import { ingestRecords } from "./records";
import { systemSender } from "@/lib/domain/trust";

/** Loads the demo data set through the ingest use case, once. */
export async function loadDemoData(now = new Date()): Promise<{ loaded: number; alreadyLoaded: boolean }> {
  const db = await reader();
  if (await db.operation.findUnique({ where: { operationId: DEMO_ESSAY_OPERATION_ID } })) {
    return { loaded: 0, alreadyLoaded: true };
  }
  const records = demoRecords(now);
  let loaded = 0;
  for (let i = 0; i < records.length; i += 100) {
    const chunk = records.slice(i, i + 100).map((raw, j) => ({ index: i + j, operationId: raw.operation_id as string, raw, sender: systemSender("demo") }));
    const results = await ingestRecords(chunk);
    const failed = results.filter((r) => "error" in r);
    if (failed.length) throw new Error(`demo data refused: ${JSON.stringify(failed[0])}`);
    loaded += chunk.length;
  }
  await writeCheckpoint();
  return { loaded, alreadyLoaded: false };
}
