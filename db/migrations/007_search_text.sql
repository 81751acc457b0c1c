-- Full text indexes what a chunk says, not where its links point: link targets and image URLs
-- (https, github, blob, commit hashes, paths shared by every chunk of a site) are dropped, anchor
-- and alt text kept, Markdown backslash escapes undone (n\_calls → n_calls). The same rules as
-- domain/search-text.ts, which prepares the text that is embedded; unlike it, this expression
-- also applies inside fenced code, where link syntax is rare. (SET EXPRESSION: PostgreSQL 17+.)
ALTER TABLE chunks ALTER COLUMN tsv SET EXPRESSION AS (
  setweight(to_tsvector(ts_config, heading_text), 'A') ||
  setweight(to_tsvector(ts_config,
    regexp_replace(
      regexp_replace(
        regexp_replace(content, '<(https?|mailto):[^>\s]*>', ' ', 'g'),
        '!?\[((?:\\.|[^]\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)', '\1', 'g'),
      '\\([^A-Za-z0-9\s])', '\1', 'g')), 'B')
);
