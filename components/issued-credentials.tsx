/**
 * One page of the credentials an issuer's page lists (app/issuer/[domain]/page.tsx,
 * docs/decisions.md#search): each with its holder and verdict, and the links to the first page and
 * the next.
 */
import type { IssuedPage } from "ident-resolver/store";
import { clipName, reasonText } from "ident-resolver/present";
import { LastChecked, Pager } from "./pager";

/** A recorded reason in words; one outside the closed set (an imported index's) in neutral ones (docs/decisions.md#rendering). */
const reasonSaid = (reason: string | null) => reasonText(reason ?? "") ?? "not verified";

/** One page of an issuer's credentials, and the links to the first and the next. */
export function IssuedCredentials({ domain, issued, cursor }: { domain: string; issued: IssuedPage; cursor: string | null }) {
  const now = new Date();
  const first = `/issuer/${domain}`;
  return (
    <>
      <ul className="issued" data-testid="issued" aria-label={`Credentials issued by ${domain}`}>
        {issued.credentials.map((c) => (
          <li key={`${c.holder.domain} ${c.id ?? ""}`} className="hit" data-testid="issued-credential" data-verified={c.verified}>
            <h2 className="hit-name">
              <a href={`/entity/${c.holder.domain}`}>
                <bdi>{clipName(c.holder.name ?? c.holder.domain)}</bdi>
              </a>{" "}
              <span className="muted">({c.holder.domain})</span>
            </h2>
            <p className="hit-description">
              {c.title ? (
                <>
                  <bdi>{clipName(c.title)}</bdi>{" "}
                </>
              ) : null}
              <code className="network-id">{clipName(c.id ?? "(no id)")}</code>
            </p>
            <p className="hit-facts">
              <span className={c.verified ? "verdict-ok" : "verdict-bad"}>
                {c.verified ? "✓ Verified" : `✗ Not verified: ${reasonSaid(c.reason)}`}
              </span>{" "}
              <LastChecked at={c.last_checked_at} now={now} />
            </p>
          </li>
        ))}
      </ul>
      <Pager
        label="More credentials"
        first={first}
        next={issued.next ? `${first}?${new URLSearchParams({ after: issued.next })}` : null}
        onFirst={!cursor}
      />
    </>
  );
}
