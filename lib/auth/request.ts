/**
 * The client's address for throttling and the audit trail. Next.js fills X-Forwarded-For with
 * the socket address when no proxy did; behind a reverse proxy it is the proxy's record.
 */
export function sourceAddress(headers: Headers | undefined | null): string | null {
  const xff = headers?.get("x-forwarded-for");
  if (xff) return xff.split(",")[0].trim().slice(0, 100) || null;
  return headers?.get("x-real-ip")?.slice(0, 100) ?? null;
}
