import { Follow } from "@/components/follow";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { clipName } from "ident-resolver/present";
import { reasonText } from "ident-resolver/present";
import { exactly, when } from "ident-resolver/present";
import { NOTHING_HERE_METADATA, NothingHere } from "@/components/nothing-here";
import { pageRequest } from "@/web/page-request";
import { app } from "@/web/app";

async function issuerOf(): Promise<string | null> {
  const { page } = await pageRequest();
  // A path that is not a domain: 404, decided by the server (web/routes.ts), said by the page.
  if (page?.kind === "no-entity") return null;
  if (page?.kind !== "issuer") notFound();
  return page.domain;
}

export async function generateMetadata(): Promise<Metadata> {
  const domain = await issuerOf();
  if (domain === null) return NOTHING_HERE_METADATA;
  return {
    title: `Credentials issued by ${domain}`,
    robots: { index: false, follow: true },
    // docs/api.md#feeds: the changes of what it issues, for feed readers.
    alternates: {
      types: { "application/atom+xml": [{ url: `/issuer/${domain}/feed.xml`, title: `Changes of the credentials ${domain} issues` }] },
    },
  };
}

/** A recorded reason in words; one outside the closed set (an imported index's) in neutral ones (docs/decisions.md#rendering). */
const reasonSaid = (reason: string | null) => reasonText(reason ?? "") ?? "not verified";

/**
 * `/issuer/{domain}` (docs/decisions.md#search): the credentials the index knows a domain issues,
 * each with its holder and whether it verifies. Read from the index alone; nothing is fetched.
 */
export default async function IssuerPage() {
  const domain = await issuerOf();
  if (domain === null) return <NothingHere />;
  const store = await app().resolver.store;
  const issued = store
    ? await store.issuedBy(domain).catch((err: unknown) => {
        app().log.warn(`store: the credentials of ${domain} could not be read: ${err instanceof Error ? err.message : String(err)}`);
        return null;
      })
    : null;
  const now = new Date();
  return (
    <div className="issuer-page">
      <h1>
        Credentials issued by <bdi>{domain}</bdi>
      </h1>
      <p>
        As far as the index knows: holders that were looked up or found by discovery. <a href={`/entity/${domain}`}>Look up {domain}</a>{" "}
        itself.
      </p>
      {issued === null ? (
        <p className="notice" role="status">
          The index cannot be read just now.
        </p>
      ) : issued.length === 0 ? (
        <div className="state" data-testid="no-credentials">
          <h2>No credential known</h2>
          <p>The index knows no holder that claims a credential issued by {domain}.</p>
        </div>
      ) : (
        <ul className="issued" data-testid="issued" aria-label={`Credentials issued by ${domain}`}>
          {issued.map((c) => (
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
                · last checked{" "}
                <time dateTime={c.last_checked_at} title={exactly(c.last_checked_at)}>
                  {when(c.last_checked_at, now)}
                </time>
              </p>
            </li>
          ))}
        </ul>
      )}
      <Follow topicPath={`/issuer/${domain}/feed.xml`} what={`a credential ${domain} issues`} />
    </div>
  );
}
