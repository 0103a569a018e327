import { describe, expect, it } from "vitest";
import { streamsTo } from "./clients";

describe("streamsTo", () => {
  it.each([
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36", true],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15", true],
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0", true],
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0", true],
    // Crawlers and link previews, including those that claim to be Chrome.
    ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", false],
    [
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/156.0.0.0 Safari/537.36",
      false,
    ],
    ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", false],
    ["facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", false],
    ["Twitterbot/1.0", false],
    ["Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", false],
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36", false],
    [
      "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse",
      false,
    ],
    // Programs.
    ["curl/8.14.1", false],
    ["node", false],
    ["python-requests/2.32", false],
    ["Playwright/1.65.0", false],
    ["", false],
    [null, false],
  ])("%s → %s", (ua, expected) => {
    expect(streamsTo(ua)).toBe(expected);
  });
});
