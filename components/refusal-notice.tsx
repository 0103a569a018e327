import type { Refusal } from "@/web/admission";

/**
 * A lookup this resolver declined for now (docs/decisions.md#outbound-work), said in words: what
 * happened, that it is not the publisher's fault, and when to try again.
 */
export function RefusalNotice({ refusal, headingLevel = 2 }: { refusal: Refusal; headingLevel?: 1 | 2 }) {
  const heading = refusal.status === 429 ? "Too many lookups for now" : "This resolver is busy";
  const Heading = headingLevel === 1 ? "h1" : "h2";
  return (
    <section className="result refusal" role="status" data-testid="refusal" data-status={refusal.status}>
      <Heading>{heading}</Heading>
      <p>{refusal.message}</p>
      <p className="muted">Nothing was checked, so nothing here says anything about the publisher.</p>
    </section>
  );
}
