import { answerRefusal, type Refusal } from "ident-resolver/traffic";

/**
 * A lookup this resolver declined for now (docs/architecture.md#traffic), said in words: what
 * happened, that it is not the publisher's fault, and when to try again.
 */
export function RefusalNotice({ refusal, headingLevel = 2 }: { refusal: Refusal; headingLevel?: 1 | 2 }) {
  const answer = answerRefusal(refusal);
  const Heading = headingLevel === 1 ? "h1" : "h2";
  return (
    <section className="result refusal" role="status" data-testid="refusal" data-status={answer.status} data-refused={refusal.refused}>
      <Heading>{answer.heading}</Heading>
      <p>{answer.message}</p>
      <p className="muted">Nothing was checked, so nothing here says anything about the publisher.</p>
    </section>
  );
}
