/**
 * `POST /recheck` (docs/publishing.md#re-check-now), `domain=` in a form: the entity and its claims
 * fetched again now, rate-limited like `?refresh=1`, then back to its page (303), which shows the new
 * verdicts and what changed, or which limit declined it (`recheck=<refusal>`, with `partly=1` when
 * only some documents were declined and the others fetched again; docs/architecture.md#traffic).
 * Works without JavaScript. Answered by the server without Next (its row, web/routes.ts): the front
 * door has checked the method and the body's length; the client is the request's (web/server.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isDomain } from "ident-resolver";
import { newWork } from "ident-resolver";
import type { ConfiguredResolver } from "ident-resolver/setup";
import { isRefusal } from "ident-resolver/traffic";
import { admitAs, currentClient, type AdmissionDeps } from "./admission";
import { rateLimitHeaders } from "./api-headers";
import { bodyOf } from "./request-body";
import { sendText, send } from "./response";
import { RECHECK_BODY_BYTES, ROUTES } from "./routes";

export type RecheckDeps = AdmissionDeps & { resolver: Pick<ConfiguredResolver, "resolveEntity"> };

/**
 * Whether a POST comes from this app's own pages: `Sec-Fetch-Site` when the browser sends it, else
 * `Origin` against the request's host. A form on another site cannot re-check through a visitor.
 */
export function sameSite(headers: IncomingMessage["headers"]): boolean {
  const site = headers["sec-fetch-site"];
  if (site !== undefined) return site === "same-origin" || site === "none";
  const origin = headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}

/** The form's domain, lower-cased; null when it names none. */
export function recheckDomain(form: string): string | null {
  const domain = (new URLSearchParams(form).get("domain") ?? "").trim().toLowerCase();
  return isDomain(domain) ? domain : null;
}

/** Answers one re-check: 303 back to the entity's page, or 400, 403, 413 in words. */
export async function serveRecheck(deps: RecheckDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!sameSite(req.headers)) return sendText(req, res, 403, "A re-check must come from this site's own pages.");
  const body = await bodyOf(req, RECHECK_BODY_BYTES);
  if (body === null) return sendText(req, res, 413, "The form is too large.");
  const domain = recheckDomain(body);
  if (domain === null) return sendText(req, res, 400, "The form names no domain to re-check.");
  const back = (params: Record<string, string>, limits: Record<string, string> = {}) =>
    send(req, res, {
      status: 303,
      headers: Object.assign({ Location: `/entity/${domain}?${new URLSearchParams(params)}`, "Cache-Control": "no-store" }, limits),
      body: null,
    });
  const client = currentClient(deps);
  // Its row's admission (web/routes.ts), the check's: a lookup that asks a refresh; the form is
  // refused when none is granted, as `?refresh=1` of the API is.
  const query = { input: domain, kind: "domain", domain } as const;
  const admission = await admitAs(deps, ROUTES.recheck.admission, client, { query, refresh: true, refreshRequired: true });
  if (!admission.ok) {
    // A form's refusal is the page it goes back to, which says which limit and when (429's words and
    // Retry-After in the page); the redirect carries the client's RateLimit headers as every refusal does.
    const limits = await rateLimitHeaders(deps.resolver.traffic.windows, client).catch(() => ({}));
    return back({ recheck: admission.refused.refused, retry: String(admission.refused.retryAfterS) }, limits);
  }
  const started = new Date();
  const work = newWork();
  const result = await deps.resolver.resolveEntity(domain, { refresh: true, client, work });
  if (isRefusal(result)) return back({ recheck: result.refused, retry: String(result.retryAfterS) });
  // Documents whose fetch was refused were answered as last fetched: not re-checked, and said so.
  const servedStale = work.knownServed[0];
  if (servedStale) return back({ recheck: servedStale.refused, retry: String(servedStale.retryAfterS), partly: "1" });
  return back({ rechecked: started.toISOString() });
}
