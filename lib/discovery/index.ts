/** `ident-resolver/discovery` (docs/library.md): the crawler that finds and re-checks entities. */
export { reverify, startCrawler, type Crawler, type CrawlerOptions } from "./crawler.ts";
