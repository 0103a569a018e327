/**
 * What the paged lists share (docs/decisions.md#search): the search's hits and an issuer's
 * credentials say when each was last checked, and link their first page and their next.
 */
import { exactly, when } from "ident-resolver/present";

/** "· last checked 3 minutes ago", the exact time on hover. */
export function LastChecked({ at, now }: { at: string; now: Date }) {
  return (
    <>
      · last checked{" "}
      <time dateTime={at} title={exactly(at)}>
        {when(at, now)}
      </time>
    </>
  );
}

/** The link to the first page from any other, and to the next while there is one. */
export function Pager({ label, first, next, onFirst }: { label: string; first: string; next: string | null; onFirst: boolean }) {
  return (
    <nav className="pager" aria-label={label}>
      {onFirst ? null : <a href={first}>First page</a>}
      {next ? (
        <a href={next} rel="next">
          Next page
        </a>
      ) : null}
    </nav>
  );
}
