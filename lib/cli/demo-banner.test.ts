import { describe, expect, it } from "vitest";
import { demoBanner, demoGatewayPort } from "./demo-banner";

const facts = {
  url: "http://localhost:3000",
  users: [
    { role: "admin", email: "admin@demo.test", password: "a" },
    { role: "viewer", email: "viewer@demo.test", password: "v" },
  ],
  token: "rcl_demo",
  social: "http://127.0.0.1:3100",
  watch: "http://localhost:3000/p/default/operations/post-1",
  gateway: { url: "http://127.0.0.1:3200/mcp", port: 3200, portFromEnv: false, configFile: "data/reconcile-gateway.json", held: true },
};

describe("what npm run demo prints", () => {
  it("leads with the address, then sign-in, the token, the post to watch and the gateway, in that order", () => {
    const text = demoBanner(facts);
    expect(text.trim().split("\n")[0]).toBe("Reconcile demo is running at http://localhost:3000");
    const at = (s: string) => {
      const i = text.indexOf(s);
      expect(i, s).toBeGreaterThanOrEqual(0);
      return i;
    };
    const order = [at("Sign in at http://localhost:3000/login"), at("admin@demo.test / a"), at("rcl_demo"), at("Watch it: http://localhost:3000/p/default/operations/post-1"), at("The MCP gateway runs at http://127.0.0.1:3200/mcp"), at("sent one just now")];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("says the gateway's port and how it is derived", () => {
    expect(demoBanner(facts)).toContain("Its port, 3200, is the app's + 200 (RECONCILE_GATEWAY_PORT sets another).");
    expect(demoBanner({ ...facts, gateway: { ...facts.gateway, port: 4000, portFromEnv: true } })).toContain("Its port, 4000, is RECONCILE_GATEWAY_PORT's.");
  });

  it("still says how to sign in when the verifier and gateway could not be set up, and why", () => {
    const text = demoBanner({ ...facts, watch: null, gateway: null, problem: "the social service did not answer" });
    expect(text).toContain("Sign in at http://localhost:3000/login");
    expect(text).not.toContain("MCP gateway");
    expect(text.trim().split("\n").at(-1)?.trim()).toBe("Not everything could be set up: the social service did not answer");
  });
});

describe("the demo gateway's port", () => {
  it("is the app's + 200 unless RECONCILE_GATEWAY_PORT names a port", () => {
    expect(demoGatewayPort(3000, undefined)).toEqual({ port: 3200, fromEnv: false });
    expect(demoGatewayPort(3000, "")).toEqual({ port: 3200, fromEnv: false });
    expect(demoGatewayPort(3000, "abc")).toEqual({ port: 3200, fromEnv: false });
    expect(demoGatewayPort(3000, "4100")).toEqual({ port: 4100, fromEnv: true });
  });
});
