"use client";

import { useState } from "react";

/**
 * Copies `text` to the clipboard. A script of this app (the CSP allows no inline handler), so it works
 * under the page's Content-Security-Policy; the text stays selectable in its <pre> without script.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
  }
  return (
    <span className="copy">
      <button type="button" className="copy-button" onClick={() => void copy()} aria-label={label} data-testid="copy">
        Copy
      </button>
      <span role="status" className="copy-status">
        {state === "copied" ? "Copied" : state === "failed" ? "Select the text and copy it" : ""}
      </span>
    </span>
  );
}
