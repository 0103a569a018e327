import { Follow } from "@/components/follow";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { IssuedCredentials } from "@/components/issued-credentials";
import { NOTHING_HERE_METADATA, NothingHere } from "@/components/nothing-here";
import type { IssuedPage } from "ident-resolver/store";
import { pageRequest } from "@/web/page-request";
import { app } from "@/web/app";

type IssuerPageOf = { domain: string; cursor: string | null; badCursor: boolean };

async function issuerOf(): Promise<IssuerPageOf | null> {
  const { page } = await pageRequest();
  // A path that is not a domain: 404, decided by the server (web/routes.ts), said by the page.
  if (page?.kind === "no-entity") return null;
  // A page link that is not one: 400, decided by the server too.
  if (page?.kind === "bad-issuer-page") return { domain: page.domain, cursor: null, badCursor: true };
  if (page?.kind !== "issuer") notFound();
  return { domain: page.domain, cursor: page.cursor, badCursor: false };
}

export async function generateMetadata(): Promise<Metadata> {
  const of = await issuerOf();
  if (of === null) return NOTHING_HERE_METADATA;
  const { domain } = of;
  return {
    title: `Credentials issued by ${domain}`,
    robots: { index: false, follow: true },
    // docs/api.md#feeds: the changes of what it issues, for feed readers.
    alternates: {
      types: { "application/atom+xml": [{ url: `/issuer/${domain}/feed.xml`, title: `Changes of the credentials ${domain} issues` }] },
    },
  };
}

/** The page's credentials: a page of them, a cursor no page handed out, or the index not readable. */
async function issuedOf(domain: string, cursor: string | null): Promise<IssuedPage | "bad cursor" | "unreadable"> {
  const store = await app().resolver.store;
  if (!store) return "unreadable";
  const issued = await store.issuedBy(domain, cursor).catch((err: unknown) => {
    app().log.warn(`store: the credentials of ${domain} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    return "unreadable" as const;
  });
  return issued ?? "bad cursor";
}

/**
 * `/issuer/{domain}` (docs/decisions.md#search): the credentials the index knows a domain issues,
 * each with its holder and whether it verifies, a hundred a page (lib/store/issued.ts). Read from the index
 * alone; nothing is fetched.
 */
export default async function IssuerPage() {
  const of = await issuerOf();
  if (of === null) return <NothingHere />;
  const { domain, cursor } = of;
  const issued = of.badCursor ? "bad cursor" : await issuedOf(domain, cursor);
  const first = `/issuer/${domain}`;
  return (
    <div className="issuer-page">
      <h1>
        Credentials issued by <bdi>{domain}</bdi>
      </h1>
      <p>
        As far as the index knows: holders that were looked up or found by discovery. <a href={`/entity/${domain}`}>Look up {domain}</a>{" "}
        itself.
      </p>
      {issued === "unreadable" ? (
        <p className="notice" role="status">
          The index cannot be read just now.
        </p>
      ) : issued === "bad cursor" ? (
        <div className="state" data-testid="bad-page-link">
          <h2>This page link is not valid</h2>
          <p>
            It was not made by this resolver, or was cut short. <a href={first}>Go to the first page</a>.
          </p>
        </div>
      ) : issued.credentials.length === 0 ? (
        <div className="state" data-testid="no-credentials">
          <h2>{cursor ? "No more credentials" : "No credential known"}</h2>
          <p>
            {cursor ? (
              <>
                The index knows no more. <a href={first}>Go to the first page</a>.
              </>
            ) : (
              `The index knows no holder that claims a credential issued by ${domain}.`
            )}
          </p>
        </div>
      ) : (
        <IssuedCredentials domain={domain} issued={issued} cursor={cursor} />
      )}
      <Follow topicPath={`/issuer/${domain}/feed.xml`} what={`a credential ${domain} issues`} />
    </div>
  );
}
