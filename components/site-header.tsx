/**
 * The site's header: its name, a link home. The link's name begins with the words it shows, "ident
 * resolver" (a real space between them, not a margin), then ", home", so that someone who says what
 * they see ("click ident resolver") reaches it (WCAG 2.5.3, label in name; checked by Lighthouse, e2e/).
 */
export function SiteHeader() {
  return (
    <header className="site-header">
      <a href="/" className="brand" aria-label="ident resolver, home">
        ident <span className="brand-accent">resolver</span>
      </a>
    </header>
  );
}
