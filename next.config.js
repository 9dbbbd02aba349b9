/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // `npm test` runs tsc --noEmit as its own step; checking again inside the build only doubles
  // the build time on a 2-core machine.
  typescript: { ignoreBuildErrors: true },
  // A project's URLs, `/p/{slug}/…`, are the pages (and API routes) at `/…`: proxy.ts has put
  // the slug in a request header. A rewrite here rather than in the proxy: Next.js carries the
  // query over whole, with its `_rsc` cache-busting parameter even when that is empty, as it is
  // on the page a server action redirects to (sign-in's). The proxy's own rewrite lost an empty
  // one: the page then answered 307, again and again ("redirect count exceeded"), and the
  // browser loaded the whole page a second time (e2e/projects.spec.ts holds it to one request).
  async rewrites() {
    return {
      beforeFiles: [
        { source: "/p/:slug", destination: "/" },
        { source: "/p/:slug/:path*", destination: "/:path*" },
      ],
    };
  },
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "same-origin" },
          { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
          { key: "X-Frame-Options", value: "DENY" },
        ],
      },
    ];
  },
};

export default nextConfig;
