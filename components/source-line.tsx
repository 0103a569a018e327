import type { SourceView } from "ident-resolver/present";

/** Where a document came from and when: JSON or HTML embed, fetched when, stale or not. */
export function SourceLine({ source, fetchedAt, stale }: { source: SourceView | null; fetchedAt?: string; stale?: boolean }) {
  if (!source && !fetchedAt) return null;
  return (
    <p className="source" data-testid="source">
      {source ? (
        <>
          From the <span data-testid="source-via">{source.via}</span> at <span className="url">{source.url}</span>
        </>
      ) : (
        "Checked"
      )}
      {fetchedAt ? (
        <>
          {" "}
          · fetched <time dateTime={fetchedAt}>{fetchedAt.replace("T", " ").replace(/\.\d+Z$/, " UTC")}</time>
        </>
      ) : null}
      {stale ? (
        <span className="badge badge-stale" data-testid="stale">
          Stale copy, refreshing
        </span>
      ) : null}
    </p>
  );
}
