import { Follow } from "@/components/follow";
import type { Metadata } from "next";
import { IndexOverview } from "@/components/index-overview";
import { SearchForm } from "@/components/search-form";
import { app } from "@/web/app";
import { HOME_ISSUERS, HOME_LATEST } from "@/web/home";

export const metadata: Metadata = {
  // docs/api.md#changes: every change of verdict, for feed readers.
  alternates: { types: { "application/atom+xml": [{ url: "/changes.xml", title: "Every change of verdict" }] } },
};

/** What the index knows, or null when it cannot be read now: the form stands on its own. */
async function overview() {
  const store = await app().resolver.store;
  if (!store) return null;
  return store.overview(HOME_LATEST, HOME_ISSUERS).catch((err: unknown) => {
    app().log.warn(`store: the home page's overview could not be read: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
}

/** `/`: the search form, and what the index knows at a glance (docs/decisions.md#the-home-page); never fetches. */
export default async function Home() {
  const shown = await overview();
  return (
    <div className="home">
      <h1>Look up a decentralised identity</h1>
      <p className="lede">
        People and organisations publish who they are on their own domains. This resolver fetches what they publish and checks every claim
        from both sides.
      </p>
      <SearchForm />
      {shown ? <IndexOverview overview={shown} /> : null}
      <Follow topicPath="/changes.xml" what="any verdict this resolver records" />
    </div>
  );
}
