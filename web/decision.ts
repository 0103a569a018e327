/**
 * What the server decides about each request before Next runs (docs/architecture.md#one-request-one-decision),
 * as types alone: the request's context (kept by web/bridge.ts, read through web/request-context.ts),
 * its admission (decided by web/admission.ts) and what its page reads of it (web/page-request.ts).
 * Apart from the modules that decide and read them, so that none of those imports another in a circle.
 */
import type { Probe } from "ident-resolver";
import type { IndexSearch } from "ident-resolver/store";
import type { Refusal } from "ident-resolver/traffic";
import type { Admitted, Delivery } from "./delivery";
import type { Page, Route } from "./routes";

/** Whether a lookup is taken on (web/admission.ts), and on what terms. */
export type Admission =
  | ({
      ok: true;
      /** Whether the lookup starts a fetch: nothing it needs is cached or being fetched, or a refresh was granted. */
      starts: boolean;
    } & Admitted)
  | { ok: false; refused: Refusal };

/** What a page reads of its request (web/page-request.ts). */
export type PageRequest = {
  page: Page | null;
  /** `?refresh=1` asked, and whether the rate limit granted it. */
  refresh: { asked: boolean; granted: boolean };
  /** The results of an entity or lookup page; null for the form, an error page, or any other page. */
  delivery: Delivery | null;
};

/** Each request's context (web/request-context.ts reads it): what the server decided before Next ran. */
export type RequestContext = {
  /** The request's id (X-Request-Id), written with every log line made while it runs. */
  id: string;
  route: Route;
  /** The client's key for the limits (lib/traffic/client.ts), worked out once from X-Forwarded-For. */
  client: string;
  userAgent: string | null;
  /** This response's CSP nonce (docs/decisions.md#security-headers). */
  nonce: string;
  /** What admission decided for a page that needed it (a lookup, the check, a search of the index); null otherwise. */
  admission: Admission | null;
  /** An answer page's results, started as soon as the request was admitted; null for any other page. */
  delivery: Promise<Delivery> | null;
  /** The status and headers the page goes with (a refusal's, a bad query's), decided before its first byte. */
  head: { status: number; headers: Record<string, string> };
  /**
   * The resolver's cache-only answer to this request's query, asked once (web/probe.ts): the page
   * cache's version asks it, admission takes it; null until asked, and again once admission took it.
   */
  probe: { key: string; answer: Promise<Probe> } | null;
  /**
   * A search of the index, run by the server in its turn before Next renders the page (web/server.ts):
   * the page of results; null for a cursor the index did not hand out; undefined when the index could
   * not be read (or the search was refused: see `admission`), or for any other page.
   */
  searched?: IndexSearch | null;
  /** What the page reads of its request (web/page-request.ts), worked out the first time the layout, metadata or page asks. */
  read: Promise<PageRequest> | null;
};
