import { describe, expect, it } from "vitest";
import { cliActor } from "./cli-actor";

describe("who a command-line action is recorded as", () => {
  it("is the command, with the operating-system user when there is one", () => {
    expect(cliActor("users:add", "alice")).toBe("cli:users:add (alice)");
    expect(cliActor("tokens:add", "")).toBe("cli:tokens:add");
    expect(cliActor("tokens:add", "  ")).toBe("cli:tokens:add");
  });
});
