import { NoScriptReload } from "./no-script-reload";

/** Shown while the entity document is being fetched: the outline of a result card. */
export function LoadingCard() {
  return (
    <div aria-busy="true" aria-live="polite" className="result" data-testid="loading">
      <NoScriptReload />
      <p className="visually-hidden">Looking up…</p>
      <div className="skeleton skeleton-title" />
      <div className="skeleton" />
      <div className="skeleton" />
    </div>
  );
}
