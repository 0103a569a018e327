import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { scratchDir } from "../test/helpers/scratch";

/** The Nu HTML Checker (validator.w3.org/nu), from the vnu-jar package, run on Java. */
const VNU = createRequire(import.meta.url)("vnu-jar") as string;

type Message = { type: string; subType?: string; message: string; url: string; lastLine?: number; extract?: string };

const PAGES = [
  "/",
  "/entity/alice.example",
  "/entity/acme.example",
  "/entity/hostile.test",
  "/search?q=alice",
  `/search?q=${encodeURIComponent("§:property:jointventure.example")}`,
  "/issuer/guild.example",
  "/check?q=alice.example",
  "/check?q=bad-network-id.test",
  "/reasons",
  "/entity/no-such-domain.test",
];

test("every kind of page is valid HTML for the Nu HTML Checker: 0 errors, as served to a crawler and to a browser", async ({ request }) => {
  test.setTimeout(120_000);
  const dir = scratchDir("ident-vnu-");
  const files: string[] = [];
  for (const [i, p] of PAGES.entries()) {
    for (const ua of [
      "Googlebot/2.1 (+http://www.google.com/bot.html)",
      "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0 Safari/537.36",
    ]) {
      const answer = await request.get(p, { headers: { "user-agent": ua } });
      const html = await answer.text();
      // A page, answered: what is checked is the page each kind really gets.
      expect(answer.status(), p).toBeLessThan(500);
      expect(html.slice(0, 15).toLowerCase(), p).toBe("<!doctype html>");
      const file = path.join(dir, `${i}-${ua.startsWith("Google") ? "crawler" : "browser"}.html`);
      writeFileSync(file, html);
      files.push(file);
    }
  }
  const out = await new Promise<string>((resolve, reject) =>
    execFile("java", ["-jar", VNU, "--format", "json", "--stdout", ...files], { maxBuffer: 16 << 20 }, (err, stdout) =>
      // vnu exits 1 when it reports errors: the report is what counts.
      stdout ? resolve(stdout) : reject(err ?? new Error("vnu printed nothing")),
    ),
  );
  const { messages } = JSON.parse(out) as { messages: Message[] };
  const errors = messages
    .filter((m) => m.type === "error" || m.subType === "fatal")
    .map((m) => `${path.basename(m.url)}:${m.lastLine ?? "?"} ${m.message} ${JSON.stringify(m.extract ?? "")}`);
  expect(errors).toEqual([]);
  // It read every file: a file it could not read would be a message of its own (type "non-document-error").
  expect(messages.filter((m) => m.type === "non-document-error")).toEqual([]);
});
