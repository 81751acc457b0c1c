-- Hybrid search in plain SQL, for people with psql as much as for the CLI and the API (which call
-- the same function, so there is one ranking to reason about).
--
--   -- by words only (no embedder needed):
--   SELECT url, heading_path, round(score::numeric, 4) AS score
--     FROM gleaner_search('gaussian process acquisition function');
--   -- by meaning and words, 5 hits, one origin's docs under a path:
--   SELECT * FROM gleaner_search('how to plot convergence', '[0.01, ...]'::vector, k => 5,
--                                domain_filter => 'scikit-optimize.github.io', path_prefix => '/stable/');
--   -- ad hoc:
--   SELECT url, heading_text, left(content, 80) FROM search_chunks WHERE host = 'docs.rs' LIMIT 5;
--
-- Note: migrations are split on ';' at line ends, so the function bodies below keep theirs off
-- line ends (each body is one statement).

-- Cosine kNN over embeddings, on both stores. Measured with `npm run bench:search` on PGlite: at
-- ~5k chunks exact kNN takes 63 ms (p50) against 19 ms through the index, while writing rows into
-- the indexed table stays within ~1.5x of a plain one (97-144 vs 111-227 rows/s), well above the
-- embedder's ~45 chunks/s; so the index pays as soon as a corpus is a few thousand chunks.
-- NULL embeddings (not embedded yet) are not indexed.
CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw_idx ON chunks USING hnsw (embedding vector_cosine_ops);

-- Lets a search find the few text-search configurations in use with a handful of index probes
-- (a loose index scan), and parse the query once for each of them only.
CREATE INDEX IF NOT EXISTS chunks_ts_config_idx ON chunks (ts_config);

-- One row per chunk with its page's URL, origin, host, path, crawl and language: the join every
-- ad-hoc query starts with. It leaves out chunks.tsv so later migrations can redefine that
-- generated column (a view depending on it would block ALTER ... SET EXPRESSION).
CREATE OR REPLACE VIEW search_chunks AS
SELECT c.id AS chunk_id,
       c.page_id,
       c.position,
       p.url,
       p.origin,
       lower(substring(p.origin from '://(\[[^\]]*\]|[^:/]+)')) AS host,
       coalesce(substring(p.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^#]*)'), '/') AS path,
       p.crawl_id,
       p.title,
       p.language,
       c.heading_path,
       c.heading_text,
       c.content,
       c.token_count,
       c.ts_config,
       c.embedding,
       c.embedding_model
  FROM chunks c
  JOIN pages p ON p.id = c.page_id;

-- Whether a page is inside a search's filters; NULL filters let everything through.
--   domain_filter: a host (matches it and its subdomains) or an origin 'scheme://host:port' (exact)
--   crawl_filter:  the id of the crawl that last fetched the page
--   path_prefix:   a path ('/docs/') or a whole URL prefix ('https://host/docs/')
CREATE OR REPLACE FUNCTION gleaner_page_matches(
  page_url text, page_origin text, page_crawl_id text,
  domain_filter text, crawl_filter text, path_prefix text
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT (domain_filter IS NULL
        OR CASE WHEN domain_filter LIKE '%://%'
                THEN lower(page_origin) = lower(rtrim(domain_filter, '/'))
                ELSE lower(substring(page_origin from '://(\[[^\]]*\]|[^:/]+)')) = lower(domain_filter)
                  OR lower(substring(page_origin from '://(\[[^\]]*\]|[^:/]+)')) LIKE '%.' || lower(domain_filter)
           END)
   AND (crawl_filter IS NULL OR page_crawl_id = crawl_filter)
   AND (path_prefix IS NULL
        OR CASE WHEN path_prefix LIKE '%://%'
                THEN starts_with(page_url, path_prefix)
                ELSE starts_with(coalesce(substring(page_url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^#]*)'), '/'), path_prefix)
           END)
$$;

-- The words of a query as a tsquery. With match_all, web-search semantics (every word, "quoted
-- phrases", -exclusions, OR). Without, plain questions match ANY of their words (ts_rank then
-- favours chunks holding more of them, close together): a query using web-search syntax keeps it.
CREATE OR REPLACE FUNCTION gleaner_tsquery(config regconfig, query_text text, match_all boolean DEFAULT false)
RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE
         WHEN match_all OR query_text ~* '"|(^|\s)-\S|\sor\s' THEN websearch_to_tsquery(config, query_text)
         ELSE replace(plainto_tsquery(config, query_text)::text, ' & ', ' | ')::tsquery
       END
$$;

-- Hybrid search: cosine kNN over embeddings and full-text ranking (the query parsed in each
-- text-search configuration the chunks use, and matched against the chunks of that configuration) each take `pool_size` candidates; reciprocal rank
-- fusion (1 / (rrf_k + rank), summed) merges them; at most `per_page` hits per page so one long
-- page cannot fill the list. With a NULL `query_embedding` (or search_mode 'fulltext') only
-- full-text runs; with search_mode 'vector' only the kNN. `vector_rank` / `text_rank` say which
-- retriever found a hit and where (NULL: not in that retriever's pool).
--
-- Full text ranks at most `max_text_candidates` matching chunks: a query whose words are
-- in more chunks than that (one very common word) ranks an arbitrary subset of them, which keeps
-- its cost bounded on a large corpus; the vector retriever still ranks the whole corpus.
--
-- plan_cache_mode: PostgreSQL 18 caches the body's plan, and a generic plan (arguments unknown)
-- cannot fold the mode and filter tests away: measured at 100k chunks, 114 ms against 6 ms.
--
-- hnsw.iterative_scan lets the HNSW index keep scanning until `pool_size` rows pass the filters
-- (and past hnsw.ef_search), instead of returning fewer rows than asked.
CREATE OR REPLACE FUNCTION gleaner_search(
  query_text      text,
  query_embedding vector(384) DEFAULT NULL,
  k               integer DEFAULT 10,
  domain_filter   text DEFAULT NULL,
  crawl_filter    text DEFAULT NULL,
  path_prefix     text DEFAULT NULL,
  per_page        integer DEFAULT 2,
  pool_size       integer DEFAULT 100,
  search_mode     text DEFAULT 'hybrid',
  rrf_k           integer DEFAULT 60,
  max_text_candidates integer DEFAULT 2000
)
RETURNS TABLE (
  chunk_id     bigint,
  page_id      bigint,
  url          text,
  title        text,
  heading_path text[],
  content      text,
  score        double precision,
  vector_rank  integer,
  text_rank    integer
)
LANGUAGE sql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET plan_cache_mode = 'force_custom_plan'
AS $$
WITH RECURSIVE unfiltered AS (
  SELECT domain_filter IS NULL AND crawl_filter IS NULL AND path_prefix IS NULL AS yes
),
knn AS (
  SELECT c.id, c.embedding <=> query_embedding AS distance
    FROM chunks c
   WHERE query_embedding IS NOT NULL
     AND c.embedding IS NOT NULL
     AND search_mode IN ('hybrid', 'vector')
     AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)))
   ORDER BY c.embedding <=> query_embedding
   LIMIT pool_size
),
vector_hits AS (
  SELECT id, row_number() OVER (ORDER BY distance, id) AS rnk FROM knn
),
configs_in_use AS (
  (SELECT ts_config FROM chunks ORDER BY ts_config LIMIT 1)
  UNION ALL
  SELECT (SELECT c.ts_config FROM chunks c WHERE c.ts_config > prev.ts_config ORDER BY c.ts_config LIMIT 1)
    FROM configs_in_use prev
   WHERE prev.ts_config IS NOT NULL
),
text_queries AS MATERIALIZED (
  SELECT config, q_all, CASE WHEN q_any = q_all THEN NULL ELSE q_any END AS q_any
    FROM (SELECT u.ts_config AS config,
                 gleaner_tsquery(u.ts_config, query_text, true) AS q_all,
                 gleaner_tsquery(u.ts_config, query_text) AS q_any
            FROM configs_in_use u
           WHERE u.ts_config IS NOT NULL
             AND search_mode IN ('hybrid', 'fulltext')
             AND coalesce(btrim(query_text), '') <> '') parsed
   WHERE numnode(q_all) > 0
),
-- Full text ranks every chunk holding any of the query's words by ts_rank (term frequency, heading
-- words weighted up), so chunks holding more of the words, more often, come first. Measured on the
-- skopt-0.9 corpus with 22 hand-written questions (test/integration/search-recall.test.ts):
-- full-text recall@5 0.773 with ts_rank against 0.591 with ts_rank_cd (cover density needs the
-- words close together, which a natural-language question's words rarely are), and ranking
-- "every word" matches in a tier of their own first cut fused recall from 0.955 to 0.818.
text_hits AS (
  SELECT m.id, row_number() OVER (ORDER BY m.rank DESC, m.id) AS rnk
    FROM text_queries tq
    CROSS JOIN LATERAL (
      SELECT c.id, ts_rank(c.tsv, coalesce(tq.q_any, tq.q_all)) AS rank
        FROM (SELECT c.id, c.tsv
                FROM chunks c
               WHERE c.tsv @@ coalesce(tq.q_any, tq.q_all)
                 AND c.ts_config = tq.config
                 AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)))
               LIMIT max_text_candidates) c
       ORDER BY rank DESC, c.id
       LIMIT pool_size
    ) m
   ORDER BY m.rank DESC, m.id
   LIMIT pool_size
),
fused AS (
  SELECT coalesce(v.id, t.id) AS id,
         v.rnk AS vector_rank,
         t.rnk AS text_rank,
         coalesce(1.0 / (rrf_k + v.rnk), 0) + coalesce(1.0 / (rrf_k + t.rnk), 0) AS score
    FROM vector_hits v
    FULL JOIN text_hits t ON t.id = v.id
),
capped AS (
  SELECT f.*, c.page_id,
         row_number() OVER (PARTITION BY c.page_id ORDER BY f.score DESC, f.id) AS nth
    FROM fused f
    JOIN chunks c ON c.id = f.id
)
SELECT c.id, c.page_id, p.url, p.title, c.heading_path, c.content,
       cap.score::double precision, cap.vector_rank::integer, cap.text_rank::integer
  FROM capped cap
  JOIN chunks c ON c.id = cap.id
  JOIN pages p ON p.id = c.page_id
 WHERE cap.nth <= per_page
 ORDER BY cap.score DESC, c.id
 LIMIT k
$$;

COMMENT ON FUNCTION gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer) IS
  'Hybrid (vector kNN + full-text) search over chunks fused by reciprocal rank fusion; NULL query_embedding searches by words only. See db/migrations/006_search.sql.';

COMMENT ON VIEW search_chunks IS 'Chunks joined with their pages (url, origin, host, path, crawl, title, language) for ad-hoc SQL.';
