import { createWriteStream, renameSync, rmSync } from "node:fs";

/**
 * Writes text chunks to `out` under a temporary name and renames it when whole: a file named
 * `out` is a complete export, never one a full disk (or anything else) cut short. Returns the
 * bytes written; on failure nothing is left at `out` and the error says so (`what`: "the export").
 */
export async function writeWhole(out: string, chunks: AsyncIterable<string>, what: string): Promise<number> {
  const partial = `${out}.partial-${process.pid}`;
  const file = createWriteStream(partial);
  let failed: Error | null = null;
  file.on("error", (e) => (failed ??= e));
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      if (failed) throw failed;
      bytes += Buffer.byteLength(chunk);
      if (!file.write(chunk)) await new Promise<void>((r, j) => (file.once("drain", () => r()), file.once("error", j)));
    }
    await new Promise<void>((resolve, reject) => file.end((e?: Error | null) => (e || failed ? reject(e ?? failed) : resolve())));
    renameSync(partial, out);
    return bytes;
  } catch (e) {
    file.destroy();
    rmSync(partial, { force: true });
    throw new Error(`${what} was not written (nothing is left at ${out}): ${e instanceof Error ? e.message : String(e)}`);
  }
}
