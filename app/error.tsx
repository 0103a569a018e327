"use client";

/** Something broke while rendering; never shows the error's text, which may hold untrusted data. */
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="state">
      <h1>Something went wrong</h1>
      <p>The lookup could not be shown. It may work if you try again.</p>
      <button type="button" onClick={() => reset()}>
        Try again
      </button>
    </div>
  );
}
