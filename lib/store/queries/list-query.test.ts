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

describe("listQuerySchema cursors", () => {
  it("takes any seq a 32-bit column can hold, and nothing past it", () => {
    expect(listQuerySchema.parse({ cursor: "2147483647", newer_than: "0" })).toMatchObject({ cursor: 2147483647, newer_than: 0 });
    for (const cursor of ["2147483648", "999999999999999", "-1", "1.5", "1e3", ""]) {
      const r = listQuerySchema.safeParse({ cursor });
      expect(r.success, cursor).toBe(false);
      expect(r.error!.issues[0].message).toBe("is not a cursor this API returned");
      expect(listQuerySchema.safeParse({ newer_than: cursor }).success, cursor).toBe(false);
    }
  });
});
