/**
 * The store's schema, as numbered migrations applied in order at start (docs/decisions.md#the-index).
 * A migration is never edited once released: a change is a new one. Applied in one transaction under
 * an advisory lock, so two instances starting together on one database apply each once.
 */
import type { Db, Queryable } from "./db.ts";
import { keepLengths, reindexSearch } from "./verdicts.ts";

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
    // docs/decisions.md#search: the search vectors are written by lib/store/search-text.ts, the one folding
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
  {
    version: 8,
    name: "what the index knows at a glance; every change in time order",
    // docs/decisions.md#the-home-page: counts kept as the index changes (by triggers, so every way a
    // row is written or removed keeps them: a record, a prune, an import's recount), in 16 rows each
    // so that instances recording at once rarely wait for one another; each issuer's verified
    // credentials, for the issuers vouching for the most; the changes in time order, for one feed of
    // them all (docs/api.md#changes), paged by what a change is (its time, entity, kind and claim),
    // which an export keeps.
    sql: `
      CREATE TABLE index_counts (name text NOT NULL, shard smallint NOT NULL, value bigint NOT NULL DEFAULT 0, PRIMARY KEY (name, shard));
      CREATE TABLE issuer_members (issuer text PRIMARY KEY, members integer NOT NULL DEFAULT 0);
      CREATE INDEX issuer_members_most ON issuer_members (members DESC, issuer) WHERE members > 0;
      CREATE INDEX changes_by_time ON changes (at, domain, kind, claim_key);
      CREATE FUNCTION ident_count(counted text, delta bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO index_counts (name, shard, value) VALUES (counted, floor(random() * 16)::smallint, delta)
        ON CONFLICT (name, shard) DO UPDATE SET value = index_counts.value + excluded.value
      $$;
      CREATE FUNCTION ident_issuer_members(named text, delta integer) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE now_members integer;
      BEGIN
        INSERT INTO issuer_members (issuer, members) VALUES (named, delta)
        ON CONFLICT (issuer) DO UPDATE SET members = issuer_members.members + excluded.members
        RETURNING members INTO now_members;
        IF delta > 0 AND now_members = delta THEN PERFORM ident_count('issuers', 1); END IF;
        IF delta < 0 AND now_members = 0 THEN PERFORM ident_count('issuers', -1); END IF;
      END $$;
      CREATE FUNCTION ident_entities_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- An import counts once at its end (recount), not row by row.
        IF current_setting('ident.counting', true) = 'off' THEN RETURN NULL; END IF;
        IF TG_OP = 'INSERT' THEN
          PERFORM ident_count('entities', 1);
          IF NEW.status = 'accepted' THEN PERFORM ident_count('accepted', 1); END IF;
          IF NEW.verified <> 0 THEN PERFORM ident_count('verified_claims', NEW.verified); END IF;
        ELSIF TG_OP = 'DELETE' THEN
          PERFORM ident_count('entities', -1);
          IF OLD.status = 'accepted' THEN PERFORM ident_count('accepted', -1); END IF;
          IF OLD.verified <> 0 THEN PERFORM ident_count('verified_claims', -OLD.verified); END IF;
        ELSE
          IF (OLD.status = 'accepted') <> (NEW.status = 'accepted') THEN
            PERFORM ident_count('accepted', CASE WHEN NEW.status = 'accepted' THEN 1 ELSE -1 END);
          END IF;
          IF OLD.verified <> NEW.verified THEN PERFORM ident_count('verified_claims', NEW.verified - OLD.verified); END IF;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER entities_counted AFTER INSERT OR DELETE ON entities FOR EACH ROW EXECUTE FUNCTION ident_entities_counted();
      CREATE TRIGGER entities_recounted AFTER UPDATE OF status, verified ON entities FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.verified IS DISTINCT FROM NEW.verified)
        EXECUTE FUNCTION ident_entities_counted();
      CREATE FUNCTION ident_claims_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('ident.counting', true) = 'off' THEN RETURN NULL; END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.kind = 'credentials' AND OLD.issuer IS NOT NULL AND OLD.verified THEN
          PERFORM ident_issuer_members(OLD.issuer, -1);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.kind = 'credentials' AND NEW.issuer IS NOT NULL AND NEW.verified THEN
          PERFORM ident_issuer_members(NEW.issuer, 1);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER claims_counted AFTER INSERT OR DELETE ON claims FOR EACH ROW EXECUTE FUNCTION ident_claims_counted();
      CREATE TRIGGER claims_recounted AFTER UPDATE OF verified, issuer, kind ON claims FOR EACH ROW
        WHEN (OLD.verified IS DISTINCT FROM NEW.verified OR OLD.issuer IS DISTINCT FROM NEW.issuer OR OLD.kind IS DISTINCT FROM NEW.kind)
        EXECUTE FUNCTION ident_claims_counted();
    `,
    run: recount,
  },
  {
    version: 9,
    name: "publisher text kept at its lengths",
    // docs/decisions.md#the-index: what was recorded before every publisher string had a length it is
    // kept at (a claim keyed by a 9 KB id, a 1 MB entity type), cut as the recorder cuts it now.
    sql: "",
    run: keepLengths,
  },
  {
    version: 10,
    name: "every change in the order it was committed",
    // docs/decisions.md#the-order-of-changes: each change's position, taken from one counter locked
    // until its transaction commits (lib/store/positions.ts), so that position order is commit order;
    // the changes recorded before are numbered in the order the feed read them (time, entity, kind,
    // claim), so a cursor of that older form names the same place. A change written without a
    // position (by an older release, while a fleet is upgraded) is placed by the next transaction
    // that takes the counter.
    sql: `
      ALTER TABLE changes ADD COLUMN position bigint;
      UPDATE changes SET position = o.n
        FROM (SELECT seq, row_number() OVER (ORDER BY at, domain, kind, claim_key, seq) AS n FROM changes) o
        WHERE changes.seq = o.seq;
      CREATE TABLE change_positions (one boolean PRIMARY KEY DEFAULT true CHECK (one), last bigint NOT NULL);
      INSERT INTO change_positions (last) SELECT count(*) FROM changes;
      CREATE UNIQUE INDEX changes_by_position ON changes (position);
      CREATE INDEX changes_unplaced ON changes (seq) WHERE position IS NULL;
    `,
  },
  {
    version: 11,
    name: "subscriptions and their deliveries",
    // docs/notices.md: who waits for which feed (a webhook, a WebSub callback), each change to deliver
    // to each of them, and how far the changes have been handed out (lib/store/notices.ts). The
    // changes recorded before are nobody's to deliver: the cursor starts at the last position.
    sql: `
      CREATE TABLE subscriptions (
        id text PRIMARY KEY,
        via text NOT NULL,
        topic text NOT NULL,
        topic_kind text NOT NULL,
        topic_domain text,
        callback text NOT NULL,
        secret text,
        client text NOT NULL,
        state text NOT NULL,
        ended_reason text,
        ended_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        from_position bigint NOT NULL,
        failing_since timestamptz
      );
      CREATE UNIQUE INDEX subscriptions_websub ON subscriptions (topic, callback) WHERE via = 'websub' AND state <> 'ended';
      CREATE INDEX subscriptions_by_topic ON subscriptions (topic_kind, topic_domain) WHERE state = 'active';
      CREATE INDEX subscriptions_by_client ON subscriptions (client) WHERE state <> 'ended';
      CREATE TABLE deliveries (
        id text PRIMARY KEY,
        subscription_id text NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        position bigint,
        rank integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        due_at timestamptz NOT NULL DEFAULT now(),
        attempts integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        outcome text,
        tried_at timestamptz,
        status integer,
        error text
      );
      CREATE INDEX deliveries_due ON deliveries (rank, due_at) WHERE outcome IS NULL;
      CREATE INDEX deliveries_by_subscription ON deliveries (subscription_id, created_at DESC);
      CREATE INDEX deliveries_waiting ON deliveries (position) WHERE outcome IS NULL;
      CREATE TABLE notice_cursor (one boolean PRIMARY KEY DEFAULT true CHECK (one), last bigint NOT NULL);
      INSERT INTO notice_cursor (last) SELECT last FROM change_positions;
    `,
  },
  {
    version: 12,
    name: "reads that follow the page at ten million entities",
    // docs/decisions.md#search-at-size: an issuer's page reads its credentials in the page's order
    // (verified first, then the holder) and stops after it, rather than sorting every one of them;
    // a domain's subdomains are a range of the reversed domains, read in that order.
    sql: `
      DROP INDEX claims_by_issuer;
      CREATE INDEX claims_by_issuer ON claims (issuer, verified DESC, domain, id) WHERE issuer IS NOT NULL;
      CREATE INDEX entities_domain_reversed ON entities ((reverse(domain) COLLATE "C"));
    `,
  },
];

/**
 * Counts what the index holds again from its rows (docs/decisions.md#the-home-page): once when the
 * counts begin, and at the end of an import, which writes its rows with the counting triggers off
 * (`SET LOCAL ident.counting = 'off'`): a failed import then leaves nothing in the counts' tables.
 */
export async function recount(tx: Queryable): Promise<void> {
  await tx.query("DELETE FROM index_counts");
  await tx.query("DELETE FROM issuer_members");
  await tx.query(
    `INSERT INTO issuer_members (issuer, members)
     SELECT issuer, count(*) FROM claims WHERE kind = 'credentials' AND issuer IS NOT NULL AND verified GROUP BY issuer`,
  );
  await tx.query(
    `INSERT INTO index_counts (name, shard, value)
     SELECT 'entities', 0, count(*) FROM entities
     UNION ALL SELECT 'accepted', 0, count(*) FILTER (WHERE status = 'accepted') FROM entities
     UNION ALL SELECT 'verified_claims', 0, coalesce(sum(verified), 0) FROM entities
     UNION ALL SELECT 'issuers', 0, count(*) FROM issuer_members WHERE members > 0`,
  );
}

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
        throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
      }
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

/**
 * A migration's statements, one by one: a parameterised query runs one statement at a time. A
 * statement ends with a semicolon at the end of a line, outside a function's `$$` body.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  for (const [i, part] of sql.split("$$").entries()) {
    // Odd parts are inside $$ … $$: kept whole.
    if (i % 2 === 1) {
      current += `$$${part}$$`;
      continue;
    }
    const pieces = part.split(/;\s*(?:\n|$)/);
    current += pieces[0] ?? "";
    for (const piece of pieces.slice(1)) {
      statements.push(current);
      current = piece;
    }
  }
  statements.push(current);
  return statements.map((s) => s.trim()).filter(Boolean);
}
