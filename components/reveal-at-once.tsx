import { headers } from "next/headers";

/**
 * React (19.2 on) holds back each streamed part of a page until 300 ms after the part shown before it
 * (its inline `$RC` waits for `$RT + 300 ms`, `$RT` being when it last revealed one), so a cold
 * entity's header, arriving 60 ms after the page, was shown 170–220 ms in, and its claims no sooner
 * than 300 ms after that. Pinned to long ago, `$RT` lets every part show as soon as it arrives
 * (docs/decisions.md#cold-pages). The parts replace placeholders of their own size: nothing shifts.
 */
const SCRIPT = 'Object.defineProperty(window,"$RT",{configurable:true,get:function(){return -1e9},set:function(){}});';

/** The CSP nonce of this response (proxy.ts), which an inline script needs. */
export async function inlineNonce(): Promise<string | undefined> {
  return /'nonce-([^']+)'/.exec((await headers()).get("content-security-policy") ?? "")?.[1];
}

/** An inline script, first in the head, before React's own streaming scripts run. */
export async function RevealAtOnce() {
  return <script nonce={await inlineNonce()} suppressHydrationWarning dangerouslySetInnerHTML={{ __html: SCRIPT }} />;
}
