-- The change feed (issue 29 item 2): an append-only, totally ordered log of what crawls changed in
-- the corpus, for downstream indexes to follow by cursor (`GET /changes`, `gleaner changes`).
--
-- Kinds, read as instructions to a follower: `new` and `changed` mean "(re)index this URL",
-- `removed` (404, 410, noindex) and `duplicate` (now a copy of `duplicate_of`, kept out of search)
-- mean "drop it". `flagged` is reserved for the quality gate (issue 27): accepted here and in the
-- API, written by nothing yet. An unchanged visit is no event. A first crawl's pages are `new`, so a
-- follower starting from cursor 0 can rebuild the whole corpus.
--
-- `seq` is the cursor. Writers take a transaction-scoped advisory lock before drawing it
-- (db/change-events.ts), so seqs commit in the order they were drawn and a reader never sees seq n+1
-- while n may still commit. Events are written in the transaction of the change they record, and
-- (crawl, page, kind) is unique: a retried activity or a page visited again in one crawl adds none.
-- No foreign key to pages: the log is history, it outlives the rows it names.
CREATE TABLE IF NOT EXISTS change_events (
  seq          bigserial PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('new', 'changed', 'removed', 'duplicate', 'flagged')),
  url          text NOT NULL,
  page_id      bigint NOT NULL,
  content_hash text,
  crawl_id     text NOT NULL,
  duplicate_of text,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (crawl_id, page_id, kind)
);
CREATE INDEX IF NOT EXISTS change_events_crawl_idx ON change_events (crawl_id, seq);

-- Backfill from the visits recorded before the feed existed, oldest first. Content hashes are known
-- only for a page's latest visit; duplicates are known only as they stand now.
INSERT INTO change_events (kind, url, page_id, content_hash, crawl_id, recorded_at)
SELECT pc.change, pc.url, pc.page_id,
       CASE WHEN pc.change <> 'removed' AND p.crawl_id = pc.crawl_id THEN p.content_hash END,
       pc.crawl_id, pc.recorded_at
  FROM page_changes pc JOIN pages p ON p.id = pc.page_id
 WHERE pc.change IN ('new', 'changed', 'removed')
 ORDER BY pc.recorded_at, pc.page_id
ON CONFLICT (crawl_id, page_id, kind) DO NOTHING;

INSERT INTO change_events (kind, url, page_id, content_hash, crawl_id, duplicate_of, recorded_at)
SELECT 'duplicate', p.url, p.id, p.content_hash, p.crawl_id, coalesce(o.url, p.canonical_url), now()
  FROM pages p LEFT JOIN pages o ON o.id = p.duplicate_of
 WHERE p.duplicate_kind IS NOT NULL AND p.crawl_id IS NOT NULL
 ORDER BY p.id
ON CONFLICT (crawl_id, page_id, kind) DO NOTHING;
