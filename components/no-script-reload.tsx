/** Seconds a browser without JavaScript waits before it asks for a page still being checked again. */
export const NO_SCRIPT_RELOAD_S = 3;

/**
 * A streamed page shows its results by script (docs/decisions.md#rendering). A browser without
 * JavaScript gets the rest of the page hidden, so it reloads by itself instead: by then the documents
 * are cached and the page arrives whole. The markup is a fixed string: React would hoist a `<meta>`
 * element into the head, where it would reload every browser.
 */
export function NoScriptReload({ say = true }: { say?: boolean }) {
  return (
    <>
      <noscript dangerouslySetInnerHTML={{ __html: `<meta http-equiv="refresh" content="${NO_SCRIPT_RELOAD_S}">` }} />
      {say ? (
        <noscript>
          <p className="notice">Still checking. This page reloads by itself in {NO_SCRIPT_RELOAD_S} seconds with the results.</p>
        </noscript>
      ) : null}
    </>
  );
}
