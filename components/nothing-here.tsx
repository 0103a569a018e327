import { SearchForm } from "./search-form";

/**
 * What a path that names no page shows, with HTTP 404: Next's own not-found page (app/not-found.tsx),
 * and an entity or issuer path that is not a domain, whose status the server decided before Next ran
 * (web/routes.ts) and whose page says so itself, in server HTML (a read page has no runtime to render
 * a not-found boundary).
 */
export function NothingHere() {
  return (
    <div className="state">
      <h1>Nothing here</h1>
      <p>That page does not exist. An entity page is /entity/ followed by a domain name.</p>
      <SearchForm />
      <p>
        <a href="/">Back to search</a>
      </p>
    </div>
  );
}

/** The metadata of such a page: kept out of indexes. */
export const NOTHING_HERE_METADATA = { title: "Nothing here", robots: { index: false, follow: true } };
