-- What text of a chunk a vector was made from (domain/embedding-text.ts): the embedding input
-- format. A vector depends on it as much as on the model's weights, so it is recorded for the
-- corpus (embedding_model.input_format) and for every vector (chunks.embedding_input). The embed
-- activity embeds again every chunk whose format differs from its own and records the new format
-- for the corpus; search ranks only vectors of the recorded format (below), so vectors of
-- two formats are never compared with one query vector.
--
-- Vectors already stored were made from the heading path and the chunk's Markdown.
ALTER TABLE embedding_model ADD COLUMN IF NOT EXISTS input_format text NOT NULL DEFAULT 'heading-markdown-v1';
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding_input text;
UPDATE chunks SET embedding_input = 'heading-markdown-v1' WHERE embedding IS NOT NULL AND embedding_input IS NULL;

-- gleaner_search, tuned on two question sets (test/fixtures/skopt-questions.json and
-- peroxide-questions.json, keyword and paraphrased questions; `npm run bench:search -- --only
-- recall`). Changes from 006: the kNN ranks only vectors of the corpus's recorded input format
-- (a NULL format: a vector written by hand, without one); each retriever's reciprocal rank has a
-- weight. Defaults here are what the API, CLI and psql get: measured with `--sweep` on the skopt
-- set, equal weights with rrf_k 60 tie or beat every other setting tried (vector 2:1 recall@5
-- 0.686, text 1.5:1 and rrf_k 20 0.714, against 0.743), so 006's fusion stays the default.
-- The function of migration 010 (with tag_filter) with the two changes above; dropped first, since
-- two overloads would make every call ambiguous.
DROP FUNCTION IF EXISTS gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer);
DROP FUNCTION IF EXISTS gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer, text[]);

CREATE FUNCTION gleaner_search(
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
  max_text_candidates integer DEFAULT 2000,
  tag_filter      text[] DEFAULT NULL,
  vector_weight   double precision DEFAULT 1.0,
  text_weight     double precision DEFAULT 1.0
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
  SELECT domain_filter IS NULL AND crawl_filter IS NULL AND path_prefix IS NULL
         AND coalesce(cardinality(tag_filter), 0) = 0 AS yes
),
knn AS (
  SELECT c.id, c.embedding <=> query_embedding AS distance
    FROM chunks c
   WHERE query_embedding IS NOT NULL
     AND c.embedding IS NOT NULL
     AND (c.embedding_input IS NULL
          OR c.embedding_input = (SELECT m.input_format FROM embedding_model m WHERE m.singleton))
     AND search_mode IN ('hybrid', 'vector')
     AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)))
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
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)))
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
         coalesce(vector_weight / (rrf_k + v.rnk), 0) + coalesce(text_weight / (rrf_k + t.rnk), 0) AS score
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

COMMENT ON FUNCTION gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer, text[], double precision, double precision) IS
  'Hybrid (vector kNN over vectors of the recorded input format + full-text) search over chunks fused by weighted reciprocal rank fusion; NULL query_embedding searches by words only; tag_filter keeps pages carrying every tag. See db/migrations/006_search.sql, 010_summaries_tags.sql and 011_search_tuning.sql.';
