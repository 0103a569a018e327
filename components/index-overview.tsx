import { cleanText, clip, clipName } from "ident-resolver/present";
import { changeText, exactly, when } from "ident-resolver/present";
import type { Overview } from "ident-resolver/store";

const NUMBER = new Intl.NumberFormat("en-US");

/** A name from the index as text a person reads: cleaned as every surface cleans it, its bidi controls gone, clipped (docs/decisions.md#rendering). */
const named = (name: string | null, domain: string) => clipName(cleanText(name ?? domain, "inline"));

/**
 * What the index knows at a glance (docs/decisions.md#the-home-page): its counts, the latest changes
 * of verdict in the cards' words, each linking to its entity's page, and the issuers vouching for
 * the most members. From the index alone; every string a publisher wrote stays text.
 */
export function IndexOverview({ overview, now = new Date() }: { overview: Overview; now?: Date }) {
  const { counts, latest, issuers } = overview;
  if (counts.entities === 0) {
    return (
      <section className="overview" aria-labelledby="overview-title" data-testid="overview-empty">
        <h2 id="overview-title">The index is empty so far</h2>
        <p>Nothing has been looked up or discovered here yet. Look up a domain above: what it publishes is checked and remembered.</p>
      </section>
    );
  }
  return (
    <section className="overview" aria-labelledby="overview-title" data-testid="overview">
      <h2 id="overview-title">What this resolver knows</h2>
      <dl className="counts" data-testid="counts">
        <div>
          <dt>Entities known</dt>
          <dd data-count="entities">{NUMBER.format(counts.entities)}</dd>
        </div>
        <div>
          <dt>Accepted</dt>
          <dd data-count="accepted">{NUMBER.format(counts.accepted)}</dd>
        </div>
        <div>
          <dt>Claims verified</dt>
          <dd data-count="verified_claims">{NUMBER.format(counts.verified_claims)}</dd>
        </div>
        <div>
          <dt>Issuers</dt>
          <dd data-count="issuers">{NUMBER.format(counts.issuers)}</dd>
        </div>
      </dl>
      <div className="overview-columns">
        <section aria-labelledby="latest-title">
          <h3 id="latest-title">Latest changes</h3>
          {latest.length === 0 ? (
            <p>No change of verdict recorded yet.</p>
          ) : (
            <ol className="latest" data-testid="latest-changes">
              {latest.map((c) => (
                <li key={`${c.at} ${c.domain} ${c.kind} ${c.claim_key}`} data-testid="latest-change" data-domain={c.domain}>
                  <time dateTime={c.at} title={exactly(c.at)}>
                    {when(c.at, now)}
                  </time>{" "}
                  <a href={`/entity/${c.domain}`}>
                    <bdi>{named(c.name, c.domain)}</bdi>
                  </a>
                  : <bdi>{clip(cleanText(changeText(c), "inline"), 200)}</bdi>
                </li>
              ))}
            </ol>
          )}
          <p className="feed-links">
            Every change, as it happens: <a href="/changes.xml">Atom feed</a> · <a href="/api/changes">JSON</a>
          </p>
        </section>
        <section aria-labelledby="issuers-title">
          <h3 id="issuers-title">Issuers vouching for the most members</h3>
          {issuers.length === 0 ? (
            <p>No credential verified yet.</p>
          ) : (
            <ol className="issuers" data-testid="top-issuers">
              {issuers.map((i) => (
                <li key={i.issuer}>
                  <a href={`/issuer/${i.issuer}`}>{i.issuer}</a> · {NUMBER.format(i.members)} {i.members === 1 ? "member" : "members"}
                </li>
              ))}
            </ol>
          )}
        </section>
      </div>
    </section>
  );
}
