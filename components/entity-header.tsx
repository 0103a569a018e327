import { reasonAnchor } from "ident-resolver/present";
import type { EntityView } from "ident-resolver/present";
import { SourceLine } from "./source-line";
import { Warnings } from "./warnings";

/** The entity at the top of a result card: who it is, or why it could not be read. */
export function EntityHeader({
  view,
  headingLevel = 2,
  linkToPage = true,
}: {
  view: EntityView;
  headingLevel?: 1 | 2;
  linkToPage?: boolean;
}) {
  const Heading = headingLevel === 1 ? "h1" : "h2";
  const accepted = view.status === "accepted";
  return (
    <header className="entity-header" data-testid="entity-header" data-status={view.status}>
      <div className="entity-title">
        <Heading className="entity-name">
          <bdi>{linkToPage && accepted ? <a href={`/entity/${encodeURIComponent(view.domain)}`}>{view.name}</a> : view.name}</bdi>
        </Heading>
        {view.badge ? <span className={`badge badge-${view.badge.toLowerCase()}`}>{view.badge}</span> : null}
        {!accepted ? <span className="badge badge-bad">Not verified</span> : null}
      </div>
      <p className="entity-domain">
        <span className="visually-hidden">Domain: </span>
        {view.domain}
        {view.networkId ? <code className="network-id">{view.networkId}</code> : null}
      </p>
      {view.failure ? (
        <div className="entity-failure" role="note">
          <p>
            <strong>{view.statusText}.</strong> <bdi>{view.failure.message}</bdi>
          </p>
          <p className="fix">What the publisher can do: {view.failure.fix}</p>
          <p>
            <a href={`/reasons#${reasonAnchor("entity", view.status)}`} className="reason-link">
              What “{view.status}” means
            </a>
          </p>
        </div>
      ) : null}
      {view.description ? <p className="entity-description">{view.description}</p> : null}
      {view.location || view.email || view.legal.length > 0 ? (
        <dl className="entity-details">
          {view.location ? (
            <div>
              <dt>Location</dt>
              <dd>{view.location}</dd>
            </div>
          ) : null}
          {view.email ? (
            <div>
              <dt>E-mail</dt>
              <dd>{view.email}</dd>
            </div>
          ) : null}
          {view.legal.map((l) => (
            <div key={l.label}>
              <dt>{l.label}</dt>
              <dd>{l.value}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      <Warnings items={view.warnings} label="Warnings about the entity document" />
      <SourceLine source={view.source} fetchedAt={view.fetchedAt} stale={view.stale} />
    </header>
  );
}
