import { FAILED_PARTS_SCRIPT } from "@/web/failed-parts";
import { inlineNonce } from "./reveal-at-once";

/** A streamed part that failed says so in place of its placeholder (web/failed-parts.ts). */
export async function FailedParts() {
  return <script nonce={await inlineNonce()} suppressHydrationWarning dangerouslySetInnerHTML={{ __html: FAILED_PARTS_SCRIPT }} />;
}
