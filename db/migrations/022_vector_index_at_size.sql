-- The HNSW index on chunks.embedding is kept from 20,000 embedded chunks on (db/vector-index.ts):
-- below that the search function's kNN is an exact scan, quick and with perfect recall, and each
-- new vector skips the index's incremental insert, which cost PGlite twice the row's own write.
-- A store that reaches the threshold gets the index built in one pass. Stores that already hold
-- that many vectors keep theirs.
-- (One statement per line end: db/migrate.ts splits statements at a semicolon that ends a line.)
DO $$ BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT 20000) s) < 20000 THEN DROP INDEX IF EXISTS chunks_embedding_hnsw_idx; END IF; END
$$;
