import type { EntityResult } from "ident-resolver";

/** Whether an entity has something for its publisher to fix: not accepted, an error, or a claim that does not verify. */
export function hasError(result: EntityResult): boolean {
  return (
    result.entity.status !== "accepted" ||
    result.entity.problems.some((p) => p.severity === "error") ||
    [...result.properties, ...result.credentials, ...result.connections].some((c) => !c.verified)
  );
}

/**
 * Under every card: "Re-check now", a form POST that works without JavaScript and from the keyboard
 * (docs/publishing.md#re-check-now), and, when the entity has an error, the way to the check.
 */
export function CardActions({ domain, result }: { domain: string; result: EntityResult | null }) {
  return (
    <div className="card-actions" data-testid="card-actions">
      <form method="post" action="/recheck" className="recheck">
        <input type="hidden" name="domain" value={domain} />
        <button type="submit" data-testid="recheck">
          Re-check now<span className="visually-hidden"> {domain}</span>
        </button>
      </form>
      {result && hasError(result) ? (
        <a href={`/check?q=${encodeURIComponent(domain)}`} data-testid="check-link">
          Is this your site? Check it
        </a>
      ) : null}
    </div>
  );
}

/** The same, once a streamed entity's claims have all settled. */
export async function SettledCardActions({ domain, result }: { domain: string; result: Promise<EntityResult> }) {
  return <CardActions domain={domain} result={await result.catch(() => null)} />;
}
