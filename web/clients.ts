/**
 * Which clients get a streamed page. An interactive browser gets the shell at once and each claim
 * as it settles; every other client (crawlers, link-preview fetchers, command-line and library
 * clients, headless browsers) gets the whole page in one piece, with the JSON-LD in the document
 * head (SPEC §8, §10). Most of those do not run the script that places a streamed boundary, so for
 * them nothing may arrive late.
 */
const BROWSER_RE = /^Mozilla\/5\.0 \(.*\b(?:Chrome|Firefox|Safari|Edg|OPR)\/\d/;
const AUTOMATED_RE =
  /bot\b|bot\/|crawl|spider|slurp|headless|lighthouse|preview|[\w-]+-Google|Google-[\w-]+|facebookexternalhit|facebookcatalog|embedly|pinterest|whatsapp|ia_archiver|qwantify|yandex|baidu|python|curl|wget|node|undici|axios|go-http|java\//i;

export function streamsTo(userAgent: string | null): boolean {
  return userAgent !== null && BROWSER_RE.test(userAgent) && !AUTOMATED_RE.test(userAgent);
}
