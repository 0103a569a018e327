/**
 * Known crawlers and link-preview bots. They get whole pages with JSON-LD in the document head
 * (SPEC §10); browsers get streamed pages. Most crawlers do not run the script that places a
 * streamed boundary, so for them nothing may arrive late.
 */
const CRAWLER_RE =
  /googlebot|google-inspectiontool|bingbot|bingpreview|duckduckbot|baiduspider|yandex(bot|images)|slurp|applebot|facebookexternalhit|facebookcatalog|twitterbot|linkedinbot|slackbot|discordbot|telegrambot|whatsapp|pinterest|embedly|redditbot|petalbot|seznambot|qwantify|ia_archiver/i;

export function isCrawler(userAgent: string | null): boolean {
  return userAgent !== null && CRAWLER_RE.test(userAgent);
}
