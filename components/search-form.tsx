/** Example queries into the sample network, one of each kind (docs/decisions.md#interfaces). */
export const EXAMPLES = [
  { q: "alice.example", what: "a domain" },
  { q: "https://acme.example/about", what: "a profile URL" },
  { q: "§:entity:hartley-law.example", what: "a network ID" },
  { q: "§:property:jointventure.example", what: "a property ID" },
  { q: "@alice@guild.example/members", what: "a credential ID" },
  { q: "makers guild", what: "a name" },
];

/** The one-field search form; a GET to /search, so it works without JavaScript. */
export function SearchForm({ value = "", error, compact = false }: { value?: string; error?: string; compact?: boolean }) {
  return (
    <form action="/search" method="get" role="search" className={compact ? "search search-compact" : "search"}>
      <label htmlFor={compact ? "q-top" : "q"} className={compact ? "visually-hidden" : "search-label"}>
        Look up an identity
      </label>
      <div className="search-row">
        <input
          id={compact ? "q-top" : "q"}
          name="q"
          type="search"
          defaultValue={value}
          required
          maxLength={512}
          autoComplete="off"
          spellCheck={false}
          placeholder="alice.example, a name, §:entity:…, @user@issuer"
          aria-describedby={error ? `${compact ? "q-top" : "q"}-error` : compact ? undefined : "q-help"}
          aria-invalid={error ? true : undefined}
        />
        <button type="submit">Search</button>
      </div>
      {error ? (
        <p id={`${compact ? "q-top" : "q"}-error`} className="search-error" role="alert">
          {error}
        </p>
      ) : null}
      {compact ? null : (
        <div id="q-help" className="search-help">
          <p>
            Type a domain, a profile URL, a network ID, a property ID or a credential ID to look it up, or a name to search the entities
            already known. Try:
          </p>
          <ul className="examples">
            {EXAMPLES.map((e) => (
              <li key={e.q}>
                <a href={`/search?${new URLSearchParams({ q: e.q })}`}>
                  <code>{e.q}</code>
                </a>{" "}
                <span className="muted">{e.what}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </form>
  );
}

/** Shown when `?refresh=1` was refused by the rate limit (docs/decisions.md#caching). */
export function RefreshRefused() {
  return (
    <p className="notice" role="status">
      Too many refreshes from your address; showing the cached result.
    </p>
  );
}
