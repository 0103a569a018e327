import type { Metadata } from "next";
import { CATALOGUE, reasonAnchor, said } from "ident-resolver/present";
import { app } from "@/web/app";

export const metadata: Metadata = { title: "Why a claim is not verified: the reasons" };

/**
 * `/reasons`: every reason code, entity status, document problem and warning, with what it means and
 * how to fix it (docs/decisions.md#reasons). Cards and the check link each reason to its entry here.
 */
export default function ReasonsPage() {
  const settings = { fetchTimeoutMs: app().config.fetchTimeoutMs };
  return (
    <div className="reasons-page">
      <h1>Reasons</h1>
      <p>
        A claim counts only when both sides name each other. When one does not verify, its card names one of the reasons below. Publishers:{" "}
        <a href="/check">check your site</a> for the exact change to make.
      </p>
      <nav aria-label="Sections">
        <ul>
          {CATALOGUE.map((section) => (
            <li key={section.anchor}>
              <a href={`#${section.anchor}`}>{section.title}</a>
            </li>
          ))}
        </ul>
      </nav>
      {CATALOGUE.map((section) => (
        <section key={section.anchor} aria-labelledby={section.anchor}>
          <h2 id={section.anchor}>{section.title}</h2>
          <dl className="reasons">
            {Object.entries(section.entries).map(([code, entry]) => (
              <div key={code} id={reasonAnchor(section.anchor, code)} className="reason" data-testid="reason" tabIndex={-1}>
                <dt>
                  <code>{code}</code>: {entry.short}
                </dt>
                <dd>
                  <p>{said(entry.means, settings)}</p>
                  <p className="fix">How to fix it: {said(entry.fix, settings)}</p>
                </dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </div>
  );
}
