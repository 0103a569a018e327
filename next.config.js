/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // web/serve.js compresses what Next writes, below its rewrite of read pages (web/script-free.ts).
  compress: false,
  // The index's engines and the preview images' drawing load files of their own at run time (PGlite's
  // and HarfBuzz's WebAssembly, resvg's native module): not bundled.
  serverExternalPackages: ["@electric-sql/pglite", "pg", "pg-copy-streams", "satori", "@resvg/resvg-js"],
  // docs/decisions.md#cold-pages: the stylesheet (8 KB) in the page itself, not a request the page
  // must wait for before it can show anything.
  experimental: { inlineCss: true },
};
export default nextConfig;
