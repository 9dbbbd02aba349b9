import { createApiToken } from "@/lib/store/people/api-tokens";
import { disconnect } from "@/lib/store/db/db";
import { prepareDatabase } from "./harness";

/**
 * A migrated database with an admin whose token may send every stage, canonical reads included
 * (`ingest` + `verify`, TRUST.md "Who may write what"). Leaves this process disconnected.
 */
export async function prepareHostile(url: string): Promise<{ token: string; email: string; password: string }> {
  const { email, password } = await prepareDatabase(url, "hostile");
  const { token } = await createApiToken({ email, name: "hostile ingest+verify", scopes: ["ingest", "verify", "read"], actor: "reliability" });
  await disconnect();
  return { token, email, password };
}
