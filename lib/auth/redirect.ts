/**
 * Where `from=` (after sign-in, or when already signed in) may send a browser: only to a path on
 * this app's own origin. The target is resolved the way a browser resolves a Location header
 * (`new URL(from, base)`), so `/\evil.example`, `//evil.example`, `https://evil.example` and
 * tab- or backslash-tricks all resolve to another origin and are refused; anything refused
 * becomes "/".
 *
 * `base` is the app's origin when the caller knows it (Auth.js's redirect callback); elsewhere a
 * placeholder origin of our own, which makes every absolute URL foreign: a same-site link never
 * needs one.
 */
const PLACEHOLDER_ORIGIN = "http://reconcile.invalid";

export function safeRedirectPath(from: unknown, base: string = PLACEHOLDER_ORIGIN): string {
  if (typeof from !== "string" || from === "") return "/";
  let origin: string;
  let url: URL;
  try {
    origin = new URL(base).origin;
    url = new URL(from, origin);
  } catch {
    return "/";
  }
  if (url.origin !== origin) return "/";
  const path = url.pathname + url.search + url.hash;
  // "/.//evil.example" resolves to the *path* "//evil.example": same origin here, but sent on as a
  // Location it would name another host.
  if (!path.startsWith("/") || path.startsWith("//")) return "/";
  return path;
}
