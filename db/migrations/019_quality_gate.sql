-- The quality gate and language (issue 27 items 3 and 4). A page that reads as not found, has too
-- little text, is only its site's template or is in a language the crawl does not keep is stored
-- with its flags and their reasons, never silently dropped; search leaves flagged pages out unless
-- asked (include_flagged). Language: what the page declares and what detection found, each kept.

-- flags: e.g. {soft-404, near-empty}; flag_reasons: flag -> one line saying why.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS flags text[] NOT NULL DEFAULT '{}';
ALTER TABLE pages ADD COLUMN IF NOT EXISTS flag_reasons jsonb;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS language_declared text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS language_detected text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS language_confidence real;
CREATE INDEX IF NOT EXISTS pages_flagged_idx ON pages (crawl_id) WHERE flags <> '{}';

-- A flagged page's chunks carry the flag too, so the default search filters them on the chunk it
-- already reads (no page lookup per candidate). Written in the page's own transaction.
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS flagged boolean NOT NULL DEFAULT false;

-- Each origin's answer to a path that cannot exist, asked once per crawl (the soft-404 probe):
-- a page that reads like it is the site's not-found page in a 200's clothing.
CREATE TABLE IF NOT EXISTS origin_probes (
  crawl_id   text NOT NULL,
  origin     text NOT NULL,
  probe_url  text NOT NULL,
  status     integer,
  outcome    text NOT NULL,
  title      text,
  simhash    bigint,
  word_count integer,
  probed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (crawl_id, origin)
);

-- The page's language as recorded: detected when detection answered, else declared.
CREATE OR REPLACE FUNCTION gleaner_page_in_languages(detected text, declared text, langs text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(cardinality(langs), 0) = 0 OR coalesce(detected, declared) = ANY(langs) $$;

DROP FUNCTION IF EXISTS gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer, text[], double precision, double precision, double precision, integer, double precision);

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
  summary_weight  double precision DEFAULT 0.2,
  include_flagged boolean DEFAULT false,
  lang_filter     text[] DEFAULT NULL
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
         AND coalesce(cardinality(tag_filter), 0) = 0
         AND coalesce(cardinality(lang_filter), 0) = 0 AS yes
),
knn AS (
  SELECT c.id, c.embedding <=> query_embedding AS distance
    FROM chunks c
   WHERE query_embedding IS NOT NULL
     AND c.embedding IS NOT NULL
     AND (include_flagged OR NOT c.flagged)
     AND (c.embedding_input IS NULL
          OR c.embedding_input = (SELECT m.input_format FROM embedding_model m WHERE m.singleton))
     AND search_mode IN ('hybrid', 'vector')
     AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)
                        AND gleaner_page_in_languages(p.language_detected, p.language_declared, lang_filter)))
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
                        AND gleaner_page_has_tags(p.id, tag_filter)
                        AND gleaner_page_in_languages(p.language_detected, p.language_declared, lang_filter)))
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
                 AND (include_flagged OR NOT c.flagged)
                 AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)
                        AND gleaner_page_in_languages(p.language_detected, p.language_declared, lang_filter)))
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
         AND (include_flagged OR NOT c.flagged)
         AND c.tsv @@ (SELECT gleaner_tsquery_or_all(r.q) FROM rare_terms r WHERE r.config = tq.config)
         AND ((SELECT yes FROM unfiltered)
          OR EXISTS (SELECT 1 FROM pages p
                      WHERE p.id = c.page_id
                        AND gleaner_page_matches(p.url, p.origin, p.crawl_id, domain_filter, crawl_filter, path_prefix)
                        AND gleaner_page_has_tags(p.id, tag_filter)
                        AND gleaner_page_in_languages(p.language_detected, p.language_declared, lang_filter)))
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
   AND (include_flagged OR NOT c.flagged)
 ORDER BY cap.score DESC, c.id
 LIMIT k
$$;

COMMENT ON FUNCTION gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer, integer, text[], double precision, double precision, double precision, integer, double precision, boolean, text[]) IS
  'Hybrid search over chunks: vector kNN, full text (chunk words + the page summary as a field of weight C) and the chunks holding the query''s rare terms, fused by weighted reciprocal rank fusion, at most per_page hits per page. Flagged pages (migration 019) are left out unless include_flagged; lang_filter keeps pages in those languages. See db/migrations/006, 010, 011, 016 and 019.';
