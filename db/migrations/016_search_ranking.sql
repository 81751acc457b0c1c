-- Ranking that finds what a person would call obvious (issue 29 item 4). Three changes to
-- gleaner_search of migration 011; everything else is unchanged.
--
-- 1. A rare exact term wins its place. ts_rank has no inverse document frequency: it ranks by how
--    often a chunk holds the query's words, each word alike. And reciprocal rank fusion keeps only
--    ranks: full text's first place is worth 1/61, less than a chunk at ranks 6 and 7 of both lists
--    (1/66 + 1/67). So a page that alone holds the query's identifier, error code or version lost
--    to pages that merely share its common words. What IDF says is the cure: a term the corpus
--    holds in very few chunks carries most of what the query asks. A third ranked list joins the
--    fusion, "exact": the chunks holding the query's rare identifier-like terms (error codes,
--    versions, snake_case or camelCase names: in at most `exact_max_df` chunks and at most 5% of
--    the corpus, i.e. IDF >= ln 20), most rare terms first, then by ts_rank.
--    Its weight `exact_weight` (2) makes its first place worth 2/(k+1), at least what any chunk
--    lacking the term can collect from the other two lists together (at most 1/(k+1) + 1/(k+1)),
--    and that chunk also sits in the full-text list (a rare term matches the any-word query), so
--    it strictly wins. A query without a rare identifier (every question of a small corpus,
--    paraphrased questions) ranks exactly as before.
-- 2. Page summaries (page_summaries.summary, migration 010) are a field of their own: a tsvector
--    over the summary (`tsv`, in the text-search configuration of the page's chunks), counted in
--    each of the page's chunks' full-text rank with weight class C (`summary_weight`, 0.2: half a
--    chunk body word's 0.4, a fifth of a heading word's 1.0). A page whose summary matches but none
--    of whose chunks hold the words is represented by its first chunk. Summaries do not become
--    chunks: the hits stay chunks of pages.
-- 3. One hit per page by default (was 2), so the top five show five pages. Measured with
--    `npm run bench:search -- --only recall --sweep`: recall@5 equal with 1 or 2 per page on both
--    sets (skopt 0.714, peroxide 0.705), recall@1 unchanged, MRR up (skopt 0.528 -> 0.536, peroxide
--    0.572 -> 0.580: a page's second chunk no longer pushes the next page down). Callers that want
--    a page's neighbouring chunks ask for more (search/context.ts does).
CREATE OR REPLACE FUNCTION gleaner_summary_config(page bigint) RETURNS regconfig
LANGUAGE sql STABLE
AS $$ SELECT coalesce((SELECT c.ts_config FROM chunks c WHERE c.page_id = page ORDER BY c.position LIMIT 1), 'english'::regconfig) $$;

ALTER TABLE page_summaries ADD COLUMN IF NOT EXISTS ts_config regconfig NOT NULL DEFAULT 'english';
ALTER TABLE page_summaries ADD COLUMN IF NOT EXISTS tsv tsvector
  GENERATED ALWAYS AS (to_tsvector(ts_config, coalesce(summary, ''))) STORED;
CREATE INDEX IF NOT EXISTS page_summaries_tsv_idx ON page_summaries USING gin (tsv);

-- A summary is parsed in its page's language, as the page's chunks are; the writers of
-- page_summaries need not know (a generated column is computed after BEFORE triggers).
CREATE OR REPLACE FUNCTION gleaner_page_summaries_config() RETURNS trigger
LANGUAGE plpgsql
-- (One line: migrations are split into statements at line-ending semicolons.)
AS $$ BEGIN NEW.ts_config := gleaner_summary_config(NEW.page_id); RETURN NEW; END $$;
DROP TRIGGER IF EXISTS page_summaries_config ON page_summaries;
CREATE TRIGGER page_summaries_config BEFORE INSERT OR UPDATE OF summary, page_id ON page_summaries
  FOR EACH ROW EXECUTE FUNCTION gleaner_page_summaries_config();
UPDATE page_summaries SET ts_config = gleaner_summary_config(page_id);

-- A lexeme as a tsquery that matches it exactly (no second stemming).
CREATE OR REPLACE FUNCTION gleaner_lexeme_query(lexeme text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery $$;

-- OR of tsqueries, as an aggregate (the rare terms' query).
CREATE OR REPLACE AGGREGATE gleaner_tsquery_or_all(tsquery) (SFUNC = tsquery_or, STYPE = tsquery);

DROP FUNCTION IF EXISTS gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer, text[], double precision, double precision);

CREATE FUNCTION gleaner_search(
  query_text      text,
  query_embedding vector(384) DEFAULT NULL,
  k               integer DEFAULT 10,
  domain_filter   text DEFAULT NULL,
  crawl_filter    text DEFAULT NULL,
  path_prefix     text DEFAULT NULL,
  per_page        integer DEFAULT 1,
  pool_size       integer DEFAULT 100,
  search_mode     text DEFAULT 'hybrid',
  rrf_k           integer DEFAULT 60,
  max_text_candidates integer DEFAULT 2000,
  tag_filter      text[] DEFAULT NULL,
  vector_weight   double precision DEFAULT 1.0,
  text_weight     double precision DEFAULT 1.0,
  exact_weight    double precision DEFAULT 2.0,
  exact_max_df    integer DEFAULT 5,
  summary_weight  double precision DEFAULT 0.2
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
  text_rank    integer,
  exact_rank   integer
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
-- Chunks in the corpus, counted up to 20 × exact_max_df: enough to tell whether a term's share is
-- under 5% without counting a large corpus.
corpus_size AS MATERIALIZED (
  SELECT count(*) AS n
    FROM (SELECT 1 FROM chunks LIMIT 20 * greatest(exact_max_df, 0)) c
   WHERE exact_weight > 0 AND EXISTS (SELECT 1 FROM text_queries)
),
-- The query's identifier-like words (a digit, an underscore, camelCase, ALL CAPS of three letters
-- or more, or letters joined by . or :), as the chunks' configurations parse them, each with its
-- document frequency (counted up to exact_max_df + 1: only "few or not" matters), over the corpus
-- as a whole, not the filtered part: rarity is a property of the term in the corpus. Only
-- identifier-like words: measured on both question sets, letting any rare word in (a paraphrased
-- question's unusual English word is rare too, and names no page) cut peroxide's paraphrased
-- recall@1 from 0.318 to 0.182.
rare_terms AS MATERIALIZED (
  SELECT tq.config, gleaner_lexeme_query(lex.lexeme) AS q
    FROM text_queries tq
    CROSS JOIN (
      SELECT string_agg(w[1], ' ') AS words
        FROM regexp_matches(query_text, '\S+', 'g') AS w
       WHERE w[1] ~ '[0-9_]|[a-z][A-Z]|[A-Z]{3}|[A-Za-z][.:]+[A-Za-z]'
    ) ident
    CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(tq.config, ident.words))) AS lex(lexeme)
    CROSS JOIN corpus_size cs
    CROSS JOIN LATERAL (
      SELECT count(*) AS df
        FROM (SELECT 1 FROM chunks c
               WHERE c.tsv @@ gleaner_lexeme_query(lex.lexeme) AND c.ts_config = tq.config
               LIMIT exact_max_df + 1) m
    ) d
   WHERE ident.words IS NOT NULL
     AND d.df BETWEEN 1 AND exact_max_df
     AND d.df * 20 <= cs.n
),
-- Pages whose summary matches, each represented by its first chunk when none of its chunks
-- holds the words (those chunks are found by the chunk match below and ranked with the summary).
summary_leads AS (
  SELECT tq.config,
         (SELECT c.id FROM chunks c WHERE c.page_id = s.page_id AND c.ts_config = tq.config
           ORDER BY c.position LIMIT 1) AS id
    FROM text_queries tq
    JOIN page_summaries s ON s.ts_config = tq.config AND s.tsv @@ coalesce(tq.q_any, tq.q_all)
   WHERE summary_weight > 0
     AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = s.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)))
   LIMIT max_text_candidates
),
-- Full text ranks every chunk holding any of the query's words by ts_rank (term frequency, heading
-- words weighted up), so chunks holding more of the words, more often, come first. Measured on the
-- skopt-0.9 corpus with 22 hand-written questions (test/integration/search-recall.test.ts):
-- full-text recall@5 0.773 with ts_rank against 0.591 with ts_rank_cd (cover density needs the
-- words close together, which a natural-language question's words rarely are), and ranking
-- "every word" matches in a tier of their own first cut fused recall from 0.955 to 0.818.
-- The page's summary is a field of weight class C in every one of its chunks' rank.
text_hits AS (
  SELECT m.id, row_number() OVER (ORDER BY m.rank DESC, m.id) AS rnk
    FROM text_queries tq
    CROSS JOIN LATERAL (
      SELECT c.id,
             ts_rank(ARRAY[0.1, summary_weight, 0.4, 1.0]::float4[],
                     CASE WHEN summary_weight > 0
                          THEN c.tsv || coalesce((SELECT setweight(s.tsv, 'C') FROM page_summaries s
                                                   WHERE s.page_id = c.page_id AND s.ts_config = tq.config), ''::tsvector)
                          ELSE c.tsv END,
                     coalesce(tq.q_any, tq.q_all)) AS rank
        FROM (SELECT c.id, c.tsv, c.page_id
                FROM chunks c
               WHERE c.tsv @@ coalesce(tq.q_any, tq.q_all)
                 AND c.ts_config = tq.config
                 AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)))
               LIMIT max_text_candidates) c
       UNION
      SELECT c.id,
             ts_rank(ARRAY[0.1, summary_weight, 0.4, 1.0]::float4[],
                     c.tsv || setweight(s.tsv, 'C'), coalesce(tq.q_any, tq.q_all)) AS rank
        FROM summary_leads sl
        JOIN chunks c ON c.id = sl.id
        JOIN page_summaries s ON s.page_id = c.page_id
       WHERE sl.config = tq.config
         AND NOT c.tsv @@ coalesce(tq.q_any, tq.q_all)
       ORDER BY rank DESC, id
       LIMIT pool_size
    ) m
   ORDER BY m.rank DESC, m.id
   LIMIT pool_size
),
-- The chunks holding the query's rare terms (a handful by definition): most of them first, then as
-- full text ranks them.
exact_hits AS (
  SELECT m.id, row_number() OVER (ORDER BY m.matched DESC, m.rank DESC, m.id) AS rnk
    FROM text_queries tq
    CROSS JOIN LATERAL (
      SELECT c.id, ts_rank(c.tsv, coalesce(tq.q_any, tq.q_all)) AS rank,
             (SELECT count(*) FROM rare_terms r WHERE r.config = tq.config AND c.tsv @@ r.q) AS matched
        FROM chunks c
       WHERE c.ts_config = tq.config
         AND c.tsv @@ (SELECT gleaner_tsquery_or_all(r.q) FROM rare_terms r WHERE r.config = tq.config)
         AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)))
       LIMIT max_text_candidates
    ) m
   -- No rare term (most queries): no scan at all.
   WHERE EXISTS (SELECT 1 FROM rare_terms r WHERE r.config = tq.config)
   ORDER BY m.matched DESC, m.rank DESC, m.id
   LIMIT pool_size
),
fused AS (
  SELECT ids.id,
         v.rnk AS vector_rank,
         t.rnk AS text_rank,
         e.rnk AS exact_rank,
         coalesce(vector_weight / (rrf_k + v.rnk), 0) + coalesce(text_weight / (rrf_k + t.rnk), 0)
           + coalesce(exact_weight / (rrf_k + e.rnk), 0) AS score
    FROM (SELECT id FROM vector_hits UNION SELECT id FROM text_hits UNION SELECT id FROM exact_hits) ids
    LEFT JOIN vector_hits v ON v.id = ids.id
    LEFT JOIN text_hits t ON t.id = ids.id
    LEFT JOIN exact_hits e ON e.id = ids.id
),
capped AS (
  SELECT f.*, c.page_id,
         row_number() OVER (PARTITION BY c.page_id ORDER BY f.score DESC, f.id) AS nth
    FROM fused f
    JOIN chunks c ON c.id = f.id
)
SELECT c.id, c.page_id, p.url, p.title, c.heading_path, c.content,
       cap.score::double precision, cap.vector_rank::integer, cap.text_rank::integer, cap.exact_rank::integer
  FROM capped cap
  JOIN chunks c ON c.id = cap.id
  JOIN pages p ON p.id = c.page_id
 WHERE cap.nth <= per_page
 ORDER BY cap.score DESC, c.id
 LIMIT k
$$;

COMMENT ON FUNCTION gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer, text[], double precision, double precision, double precision, integer, double precision) IS
  'Hybrid search over chunks: vector kNN, full text (chunk words + the page summary as a field of weight C) and the chunks holding the query''s rare terms, fused by weighted reciprocal rank fusion, at most per_page hits per page. See db/migrations/006, 010, 011 and 016_search_ranking.sql.';
