import { REVEAL_AT_ONCE_SCRIPT } from "@/web/framework";
import { requestNonce } from "@/web/page-request";

/**
 * React (19.2 on) holds back each streamed part of a page until 300 ms after the part shown before it,
 * so a cold entity's header, arriving 60 ms after the page, was shown 170–220 ms in, and its claims no
 * sooner than 300 ms after that. This script, first in the head, lets every part show as soon as it
 * arrives (docs/decisions.md#cold-pages; what it pins is React's, in web/framework.ts). The parts
 * replace placeholders of their own size: nothing shifts.
 */
export function RevealAtOnce() {
  return <script nonce={requestNonce()} suppressHydrationWarning dangerouslySetInnerHTML={{ __html: REVEAL_AT_ONCE_SCRIPT }} />;
}
