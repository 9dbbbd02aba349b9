import { describe, expect, it } from "vitest";
import { listQuerySchema } from "./list-operations";

describe("listQuerySchema refuses text no database can compare", () => {
  it.each([
    [{ tool: "a\u0000" }, /NUL/],
    [{ q: "x\ud800" }, /unpaired surrogate/],
    [{ trajectory_id: "\u0000" }, /NUL/],
    [{ q: "   " }, /./],
  ])("%j", (query, message) => {
    const r = listQuerySchema.safeParse(query);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0].message).toMatch(message);
  });
  it("keeps ordinary text", () => {
    expect(listQuerySchema.parse({ tool: "social.publish", q: "  op-1 " })).toMatchObject({ tool: "social.publish", q: "op-1" });
  });
});
