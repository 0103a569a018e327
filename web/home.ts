/**
 * The home page's view of the index (docs/decisions.md#the-home-page): how much of it the page shows,
 * and for how long one rendering of it stands in the page cache.
 */

/** Changes of verdict and issuers the home page lists. */
export const HOME_LATEST = 10;
export const HOME_ISSUERS = 5;

/** How long the home page, as rendered, stands: what changed meanwhile shows at most this late. */
export const HOME_FRESH_MS = 5_000;
