-- Recrawl: change tracking, tombstones, duplicates and adaptive revisit (issue 13).

-- When the page's content last changed (a new content hash), its learned revisit interval and the
-- time it is next due; `removed_at` / `removed_reason` make the row a tombstone (404, 410,
-- noindex): its chunks are gone, the row stays so a comeback is recognised.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS last_changed_at timestamptz;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS revisit_interval_ms bigint;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS next_visit_at timestamptz;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS removed_at timestamptz;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS removed_reason text;

-- Duplicates are indexed once: the copy records the page it duplicates and why ('exact': same
-- content hash, 'near': SimHash within 3 bits, 'canonical': rel=canonical to an in-scope URL).
-- `canonical_url` is the page's own rel=canonical when it names another in-scope URL.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS simhash bigint;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS duplicate_of bigint REFERENCES pages (id) ON DELETE SET NULL;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS duplicate_kind text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS canonical_url text;

CREATE INDEX IF NOT EXISTS pages_content_hash_idx ON pages (content_hash) WHERE removed_at IS NULL AND duplicate_kind IS NULL;
-- The pigeonhole index for near duplicates: SimHashes at Hamming distance <= 3 agree on at least
-- one of their four 16-bit blocks, so four probes find every candidate (domain/simhash.ts).
CREATE INDEX IF NOT EXISTS pages_simhash_b0_idx ON pages (((simhash >> 48) & 65535)) WHERE simhash IS NOT NULL;
CREATE INDEX IF NOT EXISTS pages_simhash_b1_idx ON pages (((simhash >> 32) & 65535)) WHERE simhash IS NOT NULL;
CREATE INDEX IF NOT EXISTS pages_simhash_b2_idx ON pages (((simhash >> 16) & 65535)) WHERE simhash IS NOT NULL;
CREATE INDEX IF NOT EXISTS pages_simhash_b3_idx ON pages ((simhash & 65535)) WHERE simhash IS NOT NULL;

-- What each crawl found for each page it visited: new, changed, unchanged or removed, plus
-- `unlinked` for pages that still answer but that no live page links to any more (set when the
-- crawl finishes).
CREATE TABLE IF NOT EXISTS page_changes (
  crawl_id    text NOT NULL,
  page_id     bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  url         text NOT NULL,
  change      text NOT NULL CHECK (change IN ('new', 'changed', 'unchanged', 'removed')),
  status      integer,
  unlinked    boolean NOT NULL DEFAULT false,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (crawl_id, page_id)
);
CREATE INDEX IF NOT EXISTS page_changes_page_idx ON page_changes (page_id);

-- Known pages claimed for a recrawl (crawl_urls.source = 'store') carry when they are due; the
-- origin workflow pages through them due-first, straight from Postgres.
ALTER TABLE crawl_urls ADD COLUMN IF NOT EXISTS due_at timestamptz;
CREATE INDEX IF NOT EXISTS crawl_urls_store_order_idx ON crawl_urls (crawl_id, origin, due_at, url) WHERE source = 'store';

-- The live link graph: edges from pages that are neither tombstones nor duplicates, to URLs that
-- are not tombstones.
CREATE OR REPLACE VIEW live_links AS
SELECT l.*
  FROM links l
  JOIN pages src ON src.id = l.from_page_id
 WHERE src.removed_at IS NULL
   AND src.duplicate_kind IS NULL
   AND NOT EXISTS (SELECT 1 FROM pages dst WHERE dst.url = l.to_url AND dst.removed_at IS NOT NULL);
