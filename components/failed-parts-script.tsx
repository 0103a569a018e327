import { FAILED_PARTS_SCRIPT } from "@/web/failed-parts";
import { requestNonce } from "@/web/page-request";

/** A streamed part that failed says so in place of its placeholder (web/failed-parts.ts). */
export function FailedParts() {
  return <script nonce={requestNonce()} suppressHydrationWarning dangerouslySetInnerHTML={{ __html: FAILED_PARTS_SCRIPT }} />;
}
