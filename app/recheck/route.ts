import { isDomain } from "@/lib/protocol/ids";
import { newWork } from "@/lib/resolver/documents";
import { isRefusal } from "@/lib/traffic";
import { admit, currentClient } from "@/web/admission";
import { app } from "@/web/app";
import { RECHECK_BODY_BYTES } from "@/web/routes";

/** The largest form body read: a domain and its field name (the front door refuses a larger one before Next reads it). */
const MAX_BODY = RECHECK_BODY_BYTES;

const plain = (status: number, text: string, extra: Record<string, string> = {}) =>
  new Response(`${text}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", ...extra } });

/**
 * Whether a POST comes from this app's own pages: `Sec-Fetch-Site` when the browser sends it, else
 * `Origin` against the request's host. A form on another site cannot re-check through a visitor.
 */
function sameSite(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin" || site === "none";
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  try {
    return new URL(origin).host === request.headers.get("host");
  } catch {
    return false;
  }
}

/**
 * `POST /recheck` (docs/publishing.md#re-check-now), `domain=` in a form: the entity and its claims
 * fetched again now, rate-limited like `?refresh=1`, then back to its page (303), which shows the new
 * verdicts and what changed, or which limit declined it (`recheck=<refusal>`, with `partly=1` when only
 * some documents were declined and the others fetched again; docs/architecture.md#traffic).
 * Works without JavaScript.
 */
export async function POST(request: Request) {
  if (!sameSite(request)) return plain(403, "A re-check must come from this site's own pages.");
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > MAX_BODY) return plain(413, "The form is too large.");
  const body = await request.text();
  if (body.length > MAX_BODY) return plain(413, "The form is too large.");
  const domain = (new URLSearchParams(body).get("domain") ?? "").trim().toLowerCase();
  if (!isDomain(domain)) return plain(400, "The form names no domain to re-check.");
  const deps = app();
  const back = (params: Record<string, string>) =>
    new Response(null, {
      status: 303,
      headers: { Location: `/entity/${domain}?${new URLSearchParams(params)}`, "Cache-Control": "no-store" },
    });
  const admission = await admit(deps, { input: domain, kind: "domain", domain }, currentClient(deps), true, true);
  if (!admission.ok) return back({ recheck: admission.refused.refused, retry: String(admission.refused.retryAfterS) });
  const started = new Date();
  const work = newWork();
  const result = await deps.resolver.resolveEntity(domain, { refresh: true, client: admission.client, work });
  if (isRefusal(result)) return back({ recheck: result.refused, retry: String(result.retryAfterS) });
  // Documents whose fetch was refused were answered as last fetched: not re-checked, and said so.
  const servedStale = work.knownServed[0];
  if (servedStale) return back({ recheck: servedStale.refused, retry: String(servedStale.retryAfterS), partly: "1" });
  return back({ rechecked: started.toISOString() });
}
