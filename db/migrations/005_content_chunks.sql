-- The content pipeline's output: each page's extraction (Markdown, metadata, strategy), its
-- heading-aware chunks with full-text and vector columns, and the one embedding model the
-- vectors belong to.

-- Extraction results live on the page row: one extraction per canonical URL.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS markdown text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS metadata jsonb;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS language text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS word_count integer;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS extract_strategy text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS extract_confidence real;
-- content_hash of the body this extraction was made from: equal to content_hash means the
-- extraction (and so the chunks) are current and a recrawl skips the work.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS extracted_hash text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS extracted_at timestamptz;

-- The embedding model every vector in `chunks.embedding` was made with. One row; a worker whose
-- model differs in name, dimension or weights refuses to run.
CREATE TABLE IF NOT EXISTS embedding_model (
  singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  name           text NOT NULL,
  dimension      integer NOT NULL,
  weights_sha256 text NOT NULL,
  recorded_at    timestamptz NOT NULL DEFAULT now()
);

-- Heading-aware chunks of a page's Markdown, in document order. `chunk_hash` is the SHA-256 of
-- the chunk's text (with its heading path): a chunk whose hash and model are unchanged keeps its
-- vector when the page is re-chunked.
CREATE TABLE IF NOT EXISTS chunks (
  id              bigserial PRIMARY KEY,
  page_id         bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  position        integer NOT NULL,
  chunk_hash      text NOT NULL,
  heading_path    text[] NOT NULL DEFAULT '{}',
  -- heading_path joined with ' > ' (generated columns cannot call array_to_string).
  heading_text    text NOT NULL DEFAULT '',
  content         text NOT NULL,
  token_count     integer NOT NULL,
  prev_id         bigint,
  next_id         bigint,
  ts_config       regconfig NOT NULL DEFAULT 'english',
  tsv             tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector(ts_config, heading_text), 'A') ||
                    setweight(to_tsvector(ts_config, content), 'B')
                  ) STORED,
  embedding       vector(384),
  embedding_model text,
  embedded_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (page_id, position)
);
CREATE INDEX IF NOT EXISTS chunks_page_idx ON chunks (page_id);
CREATE INDEX IF NOT EXISTS chunks_tsv_idx ON chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS chunks_unembedded_idx ON chunks (page_id) WHERE embedding IS NULL;
