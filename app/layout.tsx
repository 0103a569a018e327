import type { Metadata } from "next";
import type { ReactNode } from "react";
import { JsonLd } from "@/components/json-ld";
import { FailedParts } from "@/components/failed-parts-script";
import { RevealAtOnce } from "@/components/reveal-at-once";
import { SiteHeader } from "@/components/site-header";
import { connection } from "next/server";
import { headResults, isProfilePage } from "@/web/page-request";
import { siteImageMetadata } from "@/web/preview-image";
import { app } from "@/web/app";
import "./globals.css";

/**
 * The site's image for shared links goes on every page that names none of its own (an entity's page
 * names its own; docs/decisions.md#crawlers). Absolute under the public origin, known only at run
 * time: so this is worked out per request (`connection`), never at build.
 */
export async function generateMetadata(): Promise<Metadata> {
  await connection();
  const site = siteImageMetadata(app().config.publicUrl);
  return {
    title: { default: "ident resolver", template: "%s · ident resolver" },
    description: "Look up who publishes a domain, and which of their sites and credentials verify both ways.",
    openGraph: site.openGraph,
    twitter: site.twitter,
  };
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page is rendered per request: its CSP nonce changes each time (web/server.ts).
  await connection();
  // A whole page's JSON-LD goes in the head (docs/decisions.md#json-ld); the server decided once per
  // request whether the page is whole (web/page-request.ts).
  const inHead = await headResults();
  const profile = await isProfilePage();
  return (
    <html lang="en">
      <head>
        <RevealAtOnce />
        <FailedParts />
        {inHead.map((r) => (
          <JsonLd key={r.entity.domain} result={r} profile={profile} />
        ))}
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <SiteHeader />
        <main id="main">{children}</main>
        <footer className="site-footer">
          <p>Claims count only when both sides name each other. Documents are fetched server-side and may be up to a day old.</p>
        </footer>
      </body>
    </html>
  );
}
