/**
 * The site's header: its name, a link home. The link is named by the words it shows, "ident
 * resolver", followed by ", home" for a screen reader only, so that someone who says what they see
 * ("click ident resolver") reaches it (WCAG 2.5.3, label in name; checked by Lighthouse, e2e/).
 */
export function SiteHeader() {
  return (
    <header className="site-header">
      <a href="/" className="brand">
        ident <span className="brand-accent">resolver</span>
        <span className="visually-hidden">, home</span>
      </a>
    </header>
  );
}
