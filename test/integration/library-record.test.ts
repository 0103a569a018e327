/**
 * The package's resolve() answers the record the app's /api/resolve answers (docs/library.md#createresolver):
 * the same resolver as the app configures it, the same record, on the sample network. The app's
 * answer carries what its index adds (`since`); with no index, nothing else differs but the times.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parseQuery, SearchResponse, searchResponseJsonSchema } from "ident-resolver";
import { createResolver } from "ident-resolver/node";
import { createConfiguredResolver, parseConfig } from "ident-resolver/setup";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();

/** A record without what changes from one fetch to the next: times and durations. */
const timeless = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === "ms" || key === "fetched_at" ? undefined : v)));

describe("the package's resolve()", () => {
  it.each(["alice.example", "mallory.example", "§:property:blog.alice.example", "@alice@guild.example/members"])(
    "answers for %s the record the app's resolver answers, valid against the record's schema and its JSON Schema",
    async (query) => {
      const env = { IDENT_CONNECT_TO: ctx.net.connectTo };
      const library = await createResolver({ env, ca: [ctx.net.caPem] }).resolve(query);
      const parsed = parseConfig(env);
      if (!parsed.ok) throw new Error(parsed.errors.join("; "));
      const app = createConfiguredResolver(parsed.config, { ca: [ctx.net.caPem] });
      const q = parseQuery(query);
      if (!q.ok) throw new Error(q.message);
      const answer = await app.resolve(q.query);
      await app.close();
      expect(timeless(library)).toEqual(timeless(answer));
      expect(() => SearchResponse.parse(library)).not.toThrow();
      const validate = new Ajv2020({ strict: false }).compile(searchResponseJsonSchema());
      expect(validate(library), JSON.stringify(validate.errors)).toBe(true);
    },
  );
});
