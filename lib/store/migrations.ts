/**
 * The store's schema, as numbered migrations applied in order at start (docs/decisions.md#the-index).
 * A migration is never edited once released: a change is a new one. Applied in one transaction under
 * an advisory lock, so two instances starting together on one database apply each once.
 */
import type { Db, Queryable } from "./db";
import { reindexSearch } from "./verdicts";

/** A migration: statements, then, where rows must be rewritten by this resolver's own code, `run`. */
export type Migration = { version: number; name: string; sql: string; run?: (tx: Queryable) => Promise<void> };

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "entities, claims and their changes",
    sql: `
      CREATE TABLE entities (
        domain text PRIMARY KEY,
        status text NOT NULL,
        network_id text,
        entity_type text,
        details jsonb NOT NULL DEFAULT '{}',
        problems jsonb NOT NULL DEFAULT '[]',
        verified integer NOT NULL DEFAULT 0,
        unverified integer NOT NULL DEFAULT 0,
        first_seen_at timestamptz NOT NULL,
        last_checked_at timestamptz NOT NULL
      );
      CREATE TABLE claims (
        domain text NOT NULL REFERENCES entities (domain) ON DELETE CASCADE,
        kind text NOT NULL,
        claim_key text NOT NULL,
        id text,
        present boolean NOT NULL,
        verified boolean NOT NULL,
        reason text,
        stale_reason text,
        stale_message text,
        first_seen_at timestamptz NOT NULL,
        last_checked_at timestamptz NOT NULL,
        last_verified_at timestamptz,
        verified_since timestamptz,
        failing_since timestamptz,
        PRIMARY KEY (domain, kind, claim_key)
      );
      CREATE TABLE changes (
        seq bigserial PRIMARY KEY,
        domain text NOT NULL REFERENCES entities (domain) ON DELETE CASCADE,
        kind text NOT NULL,
        claim_key text NOT NULL,
        id text,
        at timestamptz NOT NULL,
        verified boolean,
        status text,
        reason text
      );
      CREATE INDEX changes_by_domain ON changes (domain, at DESC, seq DESC);
    `,
  },
  {
    version: 2,
    name: "search over names, descriptions and claims; credentials by issuer",
    // docs/decisions.md#search: a weighted full-text vector for words and prefixes, trigrams of the
    // names for small typos, both over text already lower-cased and without accents, so the indexes
    // need no function over their column (unaccent is not immutable).
    sql: `
      CREATE EXTENSION IF NOT EXISTS unaccent;
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      ALTER TABLE entities ADD COLUMN name text;
      ALTER TABLE entities ADD COLUMN description text;
      ALTER TABLE entities ADD COLUMN search tsvector NOT NULL DEFAULT ''::tsvector;
      ALTER TABLE entities ADD COLUMN names_plain text NOT NULL DEFAULT '';
      UPDATE entities SET name = details->>'name', description = details->>'description';
      UPDATE entities SET
        names_plain = lower(unaccent(coalesce(name, '') || ' ' || translate(domain, '.-', '  '))),
        search = setweight(to_tsvector('simple', lower(unaccent(coalesce(name, '') || ' ' || translate(domain, '.-', '  ') || ' ' || coalesce(network_id, '')))), 'A')
          || setweight(to_tsvector('simple', lower(unaccent(coalesce(description, '')))), 'C');
      CREATE INDEX entities_search ON entities USING gin (search);
      CREATE INDEX entities_names_trgm ON entities USING gin (names_plain gin_trgm_ops);
      CREATE INDEX entities_network_id ON entities (lower(network_id));
      ALTER TABLE claims ADD COLUMN label text;
      ALTER TABLE claims ADD COLUMN issuer text;
      ALTER TABLE claims ADD COLUMN issuer_name text;
      UPDATE claims SET issuer = lower(split_part(substr(id, 2), '@', 2)) WHERE kind = 'credentials' AND id LIKE '@%@%';
      UPDATE claims SET issuer = split_part(issuer, '/', 1) WHERE issuer IS NOT NULL;
      CREATE INDEX claims_by_issuer ON claims (issuer) WHERE issuer IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: "the queue of discovery and re-verification",
    // docs/decisions.md#discovery: one row per domain to resolve in the background, with when it is
    // due and, while an instance runs it, until when that instance holds it.
    sql: `
      CREATE TABLE crawl_queue (
        domain text PRIMARY KEY,
        reason text NOT NULL,
        priority integer NOT NULL,
        due_at timestamptz NOT NULL,
        backoff_s integer NOT NULL DEFAULT 0,
        attempts integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        queued_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX crawl_queue_due ON crawl_queue (priority, due_at);
      INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s)
        SELECT domain, 'recheck', 2,
          last_checked_at + CASE WHEN status = 'accepted' AND unverified = 0 THEN interval '24 hours' ELSE interval '1 hour' END,
          CASE WHEN status = 'accepted' AND unverified = 0 THEN 0 ELSE 3600 END
        FROM entities;
    `,
  },
  {
    version: 4,
    name: "the words of names, for typos",
    // docs/decisions.md#search: a small table of every word of every name, with trigrams, where a
    // mistyped word finds the words it may have meant.
    sql: `
      CREATE TABLE search_words (word text PRIMARY KEY);
      CREATE INDEX search_words_trgm ON search_words USING gin (word gin_trgm_ops);
      INSERT INTO search_words (word)
        SELECT DISTINCT w FROM entities, regexp_split_to_table(names_plain, '[^[:alnum:]]+') AS w
        WHERE length(w) >= 3 ON CONFLICT DO NOTHING;
    `,
  },
  {
    version: 5,
    name: "what was never accepted leaves",
    // docs/decisions.md#the-index: a domain never accepted is re-checked at most 3 times, and leaves
    // the index 7 days after its last check.
    sql: `
      ALTER TABLE entities ADD COLUMN ever_accepted boolean NOT NULL DEFAULT false;
      ALTER TABLE entities ADD COLUMN failed_checks integer NOT NULL DEFAULT 0;
      UPDATE entities SET ever_accepted = true WHERE status = 'accepted';
      UPDATE entities SET failed_checks = 1 WHERE status <> 'accepted';
      CREATE INDEX entities_never_accepted ON entities (last_checked_at) WHERE NOT ever_accepted;
    `,
  },
  {
    version: 6,
    name: "domains in byte order, for exports",
    // docs/deploying.md#moving-the-index: an export lists domains in byte order whatever the server's
    // locale, so the file of an index is the same from every store; these let it read them in that order.
    sql: `
      CREATE INDEX entities_domain_bytes ON entities ((domain COLLATE "C"));
      CREATE INDEX crawl_queue_domain_bytes ON crawl_queue ((domain COLLATE "C"));
    `,
  },
  {
    version: 7,
    name: "one folding of text; search in rank order",
    // docs/decisions.md#search: the search vectors are written by lib/store/words.ts, the one folding
    // used for searching too (the engine's unaccent folded "ø" where the query did not): every word
    // in \`search\`, the names' words in \`search_names\`; entities in rank order, so that a search of a
    // common word reads them in that order and stops after its page. The names' trigram index is
    // gone (typos are found through search_words).
    sql: `
      DROP INDEX IF EXISTS entities_names_trgm;
      ALTER TABLE entities DROP COLUMN IF EXISTS names_plain;
      ALTER TABLE entities ADD COLUMN search_names tsvector NOT NULL DEFAULT ''::tsvector;
      CREATE INDEX entities_search_names ON entities USING gin (search_names);
      CREATE INDEX entities_by_rank ON entities ((status = 'accepted') DESC, verified DESC, domain);
    `,
    run: reindexSearch,
  },
];

/** Brings the schema to the latest version; returns the versions it applied. */
export async function migrate(db: Db, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(7316001)");
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set((await tx.query<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => r.version));
    const latest = Math.max(0, ...migrations.map((m) => m.version));
    const ahead = [...done].filter((v) => v > latest);
    if (ahead.length > 0) throw new Error(`the store's schema is at version ${Math.max(...ahead)}, newer than this resolver's ${latest}`);
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      try {
        for (const statement of splitStatements(m.sql)) await tx.query(statement);
        await m.run?.(tx);
      } catch (err) {
        throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`);
      }
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** A migration's statements, one by one: a parameterised query runs one statement at a time. */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}
