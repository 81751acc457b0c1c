-- Site templates learnt per origin (issue 27 item 1, DESIGN.md rule 9; domain/site-template.ts).
--
-- site_template_blocks counts, per origin, on how many pages each block key (a block's normalised
-- text with its heading path) occurs. A page's own keys are kept on the page (`template_keys`), so
-- processing it again changes the counts by the difference only: retries, re-cleans and recrawls
-- leave the counts as they were (stable across recrawls). site_templates holds the pages counted,
-- and a version that moves when the set of template keys changes (`template_hash`).
CREATE TABLE IF NOT EXISTS site_templates (
  origin         text PRIMARY KEY,
  pages_seen     integer NOT NULL DEFAULT 0,
  version        integer NOT NULL DEFAULT 0,
  template_hash  text NOT NULL DEFAULT '',
  section_blocks integer NOT NULL DEFAULT 0,
  prose_blocks   integer NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS site_template_blocks (
  origin     text NOT NULL,
  block_key  text NOT NULL,
  page_count integer NOT NULL,
  kind       text NOT NULL,
  place      text NOT NULL,
  sample     text NOT NULL,
  PRIMARY KEY (origin, block_key)
);
CREATE INDEX IF NOT EXISTS site_template_blocks_count_idx ON site_template_blocks (origin, page_count);

-- The page's counted keys (NULL: processed before templates, or a document), the signature of the
-- template keys it was cleaned with (which of its keys were template), how many blocks went, and
-- the words left outside headings (0: nothing but template and titles; the quality gate reads it).
ALTER TABLE pages ADD COLUMN IF NOT EXISTS template_keys text[];
ALTER TABLE pages ADD COLUMN IF NOT EXISTS template_signature text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS template_blocks_removed integer;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS template_kept_words integer;
