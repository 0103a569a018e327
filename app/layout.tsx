import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { JsonLd } from "@/components/json-ld";
import { isCrawler } from "@/lib/crawlers";
import { stagedEntity } from "@/lib/server";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "ident resolver", template: "%s · ident resolver" },
  description: "Look up who publishes a domain, and which of their sites and credentials verify both ways.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page is rendered per request: the CSP nonce changes each time (proxy.ts).
  const h = await headers();
  // A crawler on an entity page gets the JSON-LD in the head, the whole page rendered before the
  // first byte; the page then leaves it out of the body. Browsers get it streamed in the body.
  const entity = h.get("x-ident-entity");
  const headJsonLd = entity && isCrawler(h.get("user-agent")) ? (await stagedEntity(entity, false)).result : null;
  return (
    <html lang="en">
      <head>{headJsonLd ? <JsonLd result={await headJsonLd} /> : null}</head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <Link href="/" className="brand" aria-label="ident resolver, home">
            ident<span>resolver</span>
          </Link>
        </header>
        <main id="main">{children}</main>
        <footer className="site-footer">
          <p>
            Claims count only when both sides name each other. Documents are fetched server-side and may be up to a day old.
          </p>
        </footer>
      </body>
    </html>
  );
}
