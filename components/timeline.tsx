import { REFUSAL_WORDS } from "ident-resolver/traffic";
import { REFUSAL_KINDS } from "ident-resolver/traffic";
import { changeText, exactly } from "ident-resolver/present";
import { app } from "@/web/app";

/** Changes shown on the page; the API has the rest. */
const SHOWN = 10;

/**
 * The entity's latest changes of verdict from the index (docs/decisions.md#the-index), read once the
 * page's own check is recorded (`settled`). Nothing when there is no index or no record.
 */
export async function Timeline({ domain, settled }: { domain: string; settled: Promise<unknown> }) {
  await settled.catch(() => undefined);
  const store = await app().resolver.store;
  const found = store ? await store.history(domain).catch(() => null) : null;
  if (!found || found.changes.length === 0) return null;
  return (
    <section className="timeline" aria-labelledby="timeline-title" data-testid="timeline">
      <h2 id="timeline-title">History</h2>
      <ol>
        {found.changes.slice(0, SHOWN).map((c, i) => (
          <li key={i} data-kind={c.kind} data-verified={c.verified ?? ""}>
            <time dateTime={c.at}>{exactly(c.at)}</time> <bdi>{changeText(c)}</bdi>
          </li>
        ))}
      </ol>
      <p className="muted">
        {found.changes.length > SHOWN ? `The latest ${SHOWN} of ${found.changes.length} recorded changes. ` : null}
        All of them as JSON: <a href={`/api/entity/${domain}/history`}>/api/entity/{domain}/history</a>
      </p>
    </section>
  );
}

/**
 * After "Re-check now" (docs/publishing.md#re-check-now): when it was re-checked and what changed,
 * from the index; or why it was not re-checked.
 */
export async function RecheckNotice({ domain, url }: { domain: string; url: URL | null }) {
  const refused = url?.searchParams.get("recheck");
  if (refused) {
    // docs/architecture.md#traffic: the refusal's own words; an unknown value is said as "busy".
    const kind = REFUSAL_KINDS.find((k) => k === refused) ?? "busy";
    const retry = Number(url?.searchParams.get("retry") ?? "60");
    const after = Number.isInteger(retry) && retry > 0 && retry <= 3600 ? retry : 60;
    const partly = url?.searchParams.get("partly") === "1";
    return (
      <p className="notice" role="status" data-testid="recheck-notice" data-outcome={partly ? "partly" : "refused"} data-refused={kind}>
        {partly ? "Not all re-checked. " : "Not re-checked. "}
        {REFUSAL_WORDS[kind].meaning} {partly ? "What could not be fetched again is shown as last fetched." : "This is the last check."} Try
        again in {after} s.
      </p>
    );
  }
  const at = url?.searchParams.get("rechecked");
  const since = at ? new Date(at) : null;
  if (!at || !since || Number.isNaN(since.getTime())) return null;
  const store = await app().resolver.store;
  const found = store ? await store.history(domain).catch(() => null) : null;
  const changes = (found?.changes ?? []).filter((c) => new Date(c.at) >= since);
  return (
    <div className="notice" role="status" data-testid="recheck-notice" data-outcome="rechecked" data-changes={changes.length}>
      <p>
        Re-checked at {exactly(since.toISOString())} UTC.{" "}
        {changes.length === 0 ? "No verdict changed." : `${changes.length} verdict${changes.length === 1 ? "" : "s"} changed:`}
      </p>
      {changes.length > 0 ? (
        <ul>
          {changes.map((c, i) => (
            <li key={i}>
              <bdi>{changeText(c)}</bdi>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
