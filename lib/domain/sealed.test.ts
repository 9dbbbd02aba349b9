import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openText, sealText } from "./sealed";
import { openSecret, sealSecret } from "./webhooks/signing";

const SERVER = "server-secret-0123456789abcdef";

describe("sealed secrets", () => {
  it("open what they sealed, and nothing sealed for another purpose or under another server secret", () => {
    const sealed = sealText("st0red", SERVER, "verifier secrets v1");
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain("st0red");
    expect(openText(sealed, SERVER, "verifier secrets v1")).toBe("st0red");
    expect(() => openText(sealed, SERVER, "webhook endpoint secrets v1")).toThrow();
    expect(() => openText(sealed, `${SERVER}x`, "verifier secrets v1")).toThrow();
    const [v, iv, tag, text] = sealed.split(".");
    const flipped = Buffer.from(text, "base64url");
    flipped[0] ^= 1;
    expect(() => openText([v, iv, tag, flipped.toString("base64url")].join("."), SERVER, "verifier secrets v1")).toThrow();
    expect(() => openText("v2.a.b.c", SERVER, "verifier secrets v1")).toThrow(/not in a known form/);
  });

  it("webhook secrets sealed before the box moved here still open: the same key, derived the same way", () => {
    const key = Buffer.from(hkdfSync("sha256", SERVER, "reconcile", "webhook endpoint secrets v1", 32));
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const text = Buffer.concat([cipher.update("whsec_old", "utf8"), cipher.final()]);
    const before = ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), text.toString("base64url")].join(".");
    expect(openSecret(before, SERVER)).toBe("whsec_old");
    expect(openSecret(sealSecret("whsec_new", SERVER), SERVER)).toBe("whsec_new");
  });

  it("a project's webhook secrets are sealed under its own key: they open in it, not in another project nor the default; ones sealed before still open", () => {
    const alpha = sealSecret("whsec_alpha", SERVER, "alpha");
    expect(openSecret(alpha, SERVER, "alpha")).toBe("whsec_alpha");
    expect(() => openSecret(alpha, SERVER, "beta")).toThrow();
    expect(() => openSecret(alpha, SERVER)).toThrow();
    expect(() => openText(alpha, SERVER, "webhook endpoint secrets v1")).toThrow();
    // Sealed before issue 47, under the one purpose all projects shared: still opens in its project.
    const shared = sealText("whsec_shared", SERVER, "webhook endpoint secrets v1");
    expect(openSecret(shared, SERVER, "alpha")).toBe("whsec_shared");
    // The default project's keep their purpose.
    expect(openText(sealSecret("whsec_default", SERVER, "default"), SERVER, "webhook endpoint secrets v1")).toBe("whsec_default");
  });
});
