/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The index's engines load files of their own at run time (PGlite's WebAssembly): not bundled.
  serverExternalPackages: ["@electric-sql/pglite", "pg"],
};
export default nextConfig;
