/**
 * Said where a streamed part would have been when its work failed (web/settle.ts): read pages have no
 * client runtime to put an error page in its place (web/script-free.ts).
 */
/** Said where the failed part would have been; for a claim, as an item of its list, its id isolated (docs/decisions.md#rendering). */
export function StreamFailure({ what, claim }: { what: string; claim?: string }) {
  const rest = " could not be shown because of a fault on this server. Reload the page to try again.";
  return claim === undefined ? (
    <p className="query-problems error" role="alert" data-testid="part-failed">
      {what}
      {rest}
    </p>
  ) : (
    <li className="claim claim-unverified" data-testid="part-failed">
      {what} <bdi>{claim}</bdi>
      {rest}
    </li>
  );
}
