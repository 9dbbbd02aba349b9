import "server-only";
import { unusedTools } from "@/lib/store/queries/tools";

/**
 * What a saved setting that names tools warns about: a tool no operation has used yet (a typo,
 * or a tool not yet sending). The save stands; the answer's `warnings` say so, one a tool.
 */
export async function toolWarnings(tools: readonly string[]): Promise<string[]> {
  return (await unusedTools(tools)).map((t) => `no operation has used the tool ${t} yet`);
}
