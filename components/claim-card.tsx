"use client";

import { OUTBOUND_REL } from "ident-resolver/present";
import type { ClaimView } from "ident-resolver/present";
import { NoScriptReload } from "./no-script-reload";
import { SourceLine } from "./source-line";
import { Warnings } from "./warnings";

/** One claim. A verified one and an unverified one never look alike (docs/decisions.md#rendering). */
export function ClaimCard({ view }: { view: ClaimView }) {
  return (
    <li
      className={view.verified ? "claim claim-verified" : "claim claim-unverified"}
      data-testid="claim"
      data-verified={view.verified}
      data-reason={view.reason?.code ?? ""}
    >
      <div className="claim-head">
        <span className="claim-mark" aria-hidden="true">
          {view.verified ? "✓" : "✗"}
        </span>
        <span className="visually-hidden">{view.verified ? "Verified: " : "Not verified: "}</span>
        <span className="claim-title">
          {view.link && view.verified ? (
            <a href={view.link.href} rel={OUTBOUND_REL} target="_blank">
              {view.title}
            </a>
          ) : (
            view.title
          )}
        </span>
        {view.type ? <span className="badge">{view.type}</span> : null}
        {view.history?.stale ? (
          <span className="badge badge-stale" data-testid="claim-stale">
            Not re-checked
          </span>
        ) : null}
      </div>
      {view.history ? (
        <p className="claim-since" data-testid="claim-since">
          {view.history.text}
          {view.history.stale ? <span className="claim-stale-note"> {view.history.stale}</span> : null}
        </p>
      ) : null}
      {view.id !== view.title ? (
        <p className="claim-id">
          <code>{view.id}</code>
        </p>
      ) : null}
      {view.issuer ? (
        <p className="claim-issuer">
          Issued by <bdi>{view.issuer.name}</bdi> <span className="muted">({view.issuer.domain})</span>
          {view.dataset ? (
            <>
              {" "}
              · <bdi>{view.dataset}</bdi>
            </>
          ) : null}
        </p>
      ) : null}
      {view.description ? <p className="claim-description">{view.description}</p> : null}
      {view.verified && view.profile ? (
        <p>
          <a href={view.profile.href} rel={OUTBOUND_REL} target="_blank">
            {view.profile.text}
          </a>
        </p>
      ) : null}
      {view.reason ? (
        <div className="claim-reason">
          <p>
            <strong>Why not verified:</strong> <bdi>{view.reason.detail}</bdi>
          </p>
          <p className="fix">What the publisher can do: {view.reason.fix}</p>
          {view.reason.technical ? <p className="muted technical">Technical detail: {view.reason.technical}</p> : null}
          <p>
            <a href={`/reasons#claim-${view.reason.code}`} className="reason-link">
              What “{view.reason.code}” means
            </a>
          </p>
        </div>
      ) : null}
      <Warnings items={view.warnings} label="Warnings" />
      <SourceLine source={view.source} />
    </li>
  );
}

/**
 * A settled list of claims. A client component, so a warm page sends each claim once as compact
 * data in the RSC payload rather than as its element tree (docs/architecture.md).
 */
export function ClaimList({ views, kind }: { views: ClaimView[]; kind: string }) {
  return (
    <ul className="claims">
      {views.map((view, i) => (
        <ClaimCard key={`${kind}-${i}`} view={view} />
      ))}
    </ul>
  );
}

/** Placeholder while a claim is being checked; same outline as a card, so nothing jumps. */
export function ClaimSkeleton({ id }: { id: string }) {
  return (
    <li className="claim claim-pending" data-testid="claim-pending" aria-busy="true">
      <div className="claim-head">
        <span className="claim-mark spinner" aria-hidden="true" />
        <span className="claim-title">Checking…</span>
      </div>
      <NoScriptReload say={false} />
      <p className="claim-id">
        <code>{id}</code>
      </p>
    </li>
  );
}
