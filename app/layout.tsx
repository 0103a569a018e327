import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "ident resolver", template: "%s · ident resolver" },
  description: "Look up who publishes a domain, and which of their sites and credentials verify both ways.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page is rendered per request: the CSP nonce changes each time (proxy.ts).
  await headers();
  return (
    <html lang="en">
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
