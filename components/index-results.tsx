import { ownValue } from "ident-resolver";
import { clip, clipName } from "ident-resolver/present";
import { statusText } from "ident-resolver/present";
import { markWords } from "ident-resolver/present";
import type { IndexSearch } from "ident-resolver/store";
import { LastChecked, Pager } from "./pager";

/** Untrusted text with the searched words marked; React escapes every segment. */
function Marked({ text, search }: { text: string; search: string }) {
  return <bdi>{markWords(text, search).map((s, i) => (s.marked ? <mark key={i}>{s.text}</mark> : s.text))}</bdi>;
}

/** The badge of each entity type; any other type, `constructor` among them, has none (docs/decisions.md#rendering). */
const BADGE: Record<string, string> = { person: "Person", organization: "Organization" };

/** Said when a search of very common words stopped before it filled its page (docs/decisions.md#search-at-size). */
function CutShort({ page }: { page: IndexSearch }) {
  if (!page.cut_short) return null;
  return (
    <p className="hit-facts" role="status" data-testid="cut-short">
      This search stopped early: its words are in so many entries that going on would hold the index up for everyone. More words narrow it.
    </p>
  );
}

/** One page of index hits (docs/decisions.md#search), or the empty state that suggests a lookup. */
export function IndexResults({ page, cursor, now = new Date() }: { page: IndexSearch; cursor: string | null; now?: Date }) {
  const search = page.query;
  if (page.results.length === 0) {
    return (
      <div className="state" data-testid="no-hits">
        <CutShort page={page} />
        <h2>Nothing in the index matches</h2>
        <p>
          The index knows the entities that were looked up or found from them. If you know the domain, look it up instead: type it above
          (for example <a href="/search?q=alice.example">alice.example</a>) and every claim is checked from both sides.
        </p>
        {cursor ? (
          <p>
            <a href={`/search?${new URLSearchParams({ q: search })}`}>Back to the first page</a>
          </p>
        ) : null}
      </div>
    );
  }
  return (
    <>
      <CutShort page={page} />
      <ol className="hits" data-testid="hits">
        {page.results.map((hit) => {
          const badge = hit.entity_type ? ownValue(BADGE, hit.entity_type.toLowerCase()) : undefined;
          return (
            <li key={hit.domain} className="hit" data-testid="hit" data-domain={hit.domain}>
              <h2 className="hit-name">
                <a href={hit.url}>
                  <Marked text={clipName(hit.name ?? hit.domain)} search={search} />
                </a>
                {badge ? <span className={`badge badge-${badge.toLowerCase()}`}>{badge}</span> : null}
                {hit.status !== "accepted" ? <span className="badge badge-bad">Not verified</span> : null}
              </h2>
              <p className="entity-domain">
                <span className="visually-hidden">Domain: </span>
                <Marked text={hit.domain} search={search} />
              </p>
              {hit.description ? (
                <p className="hit-description">
                  <Marked text={clip(hit.description, 240)} search={search} />
                </p>
              ) : null}
              <p className="hit-facts">
                {hit.status === "accepted" ? (
                  <>
                    <span className="hit-verified">{hit.verified} verified</span> ·{" "}
                    <span className={hit.unverified > 0 ? "hit-unverified" : undefined}>{hit.unverified} not verified</span>
                  </>
                ) : (
                  // The index's status, which an import fills with any text: one it has no words for is said as itself.
                  <span>{statusText(hit.status) ?? <bdi>{clipName(hit.status)}</bdi>}</span>
                )}{" "}
                <LastChecked at={hit.last_checked_at} now={now} />
              </p>
            </li>
          );
        })}
      </ol>
      <Pager
        label="More results"
        first={`/search?${new URLSearchParams({ q: search })}`}
        next={page.next_cursor ? `/search?${new URLSearchParams({ q: search, cursor: page.next_cursor })}` : null}
        onFirst={!cursor}
      />
    </>
  );
}
