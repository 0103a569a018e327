import { describe, expect, it } from "vitest";
import { isCrawler } from "./crawlers";

describe("isCrawler", () => {
  it.each([
    ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", true],
    ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", true],
    ["facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", true],
    ["Twitterbot/1.0", true],
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36", false],
    [null, false],
  ])("%s → %s", (ua, expected) => {
    expect(isCrawler(ua)).toBe(expected);
  });
});
