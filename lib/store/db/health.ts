import "server-only";
import { reader } from "./db";

/** null when the database is reachable and migrated; otherwise what is wrong, for a person. */
export async function checkHealth(): Promise<string | null> {
  try {
    const db = await reader();
    await db.chainRecord.findFirst({ select: { seq: true } });
    return null;
  } catch {
    return "the database is not reachable or not migrated (run npm run db:deploy)";
  }
}
