import { FAILED_PART, FAULT_SAID } from "@/web/failed-parts";

/**
 * Said where a streamed part would have been when its work failed (web/settle.ts): read pages have no
 * client runtime to put an error page in its place (web/script-free.ts). For a claim, as an item of
 * its list, its id isolated (docs/decisions.md#rendering).
 */
export function StreamFailure({ what, claim }: { what: string; claim?: string }) {
  return claim === undefined ? (
    <p className="query-problems error" role="alert" data-testid={FAILED_PART}>
      {what}
      {FAULT_SAID}
    </p>
  ) : (
    <li className="claim claim-unverified" data-testid={FAILED_PART}>
      {what} <bdi>{claim}</bdi>
      {FAULT_SAID}
    </li>
  );
}
