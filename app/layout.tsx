import type { Metadata } from "next";
import type { ReactNode } from "react";
import { JsonLd } from "@/components/json-ld";
import { headResults, isProfilePage } from "@/web/page-request";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "ident resolver", template: "%s · ident resolver" },
  description: "Look up who publishes a domain, and which of their sites and credentials verify both ways.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // A whole page's JSON-LD goes in the head (docs/decisions.md#json-ld); web/page-request.ts decides
  // once per request whether the page is whole (every page is rendered per request anyway: the CSP
  // nonce changes each time, proxy.ts).
  const inHead = await headResults();
  const profile = await isProfilePage();
  return (
    <html lang="en">
      <head>
        {inHead.map((r) => (
          <JsonLd key={r.entity.domain} result={r} profile={profile} />
        ))}
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <a href="/" className="brand" aria-label="ident resolver, home">
            ident<span>resolver</span>
          </a>
        </header>
        <main id="main">{children}</main>
        <footer className="site-footer">
          <p>Claims count only when both sides name each other. Documents are fetched server-side and may be up to a day old.</p>
        </footer>
      </body>
    </html>
  );
}
