-- Sitemap claims: where a claimed URL came from and the hints its sitemap gave, so the origin
-- workflow can take sitemap URLs in priority order, in bounded pages, straight from Postgres.
-- `source` is 'sitemap' for URLs claimed from a sitemap (their discovered_from is
-- 'sitemap:<sitemap url>') and NULL for URLs claimed from a page's links or as seeds.
ALTER TABLE crawl_urls ADD COLUMN IF NOT EXISTS priority real;
ALTER TABLE crawl_urls ADD COLUMN IF NOT EXISTS lastmod timestamptz;
ALTER TABLE crawl_urls ADD COLUMN IF NOT EXISTS source text;

-- The frontier order of sitemap claims, all ascending so keyset paging is one row comparison:
-- priority high to low (absent last), lastmod new to old (absent last), then url. The two
-- expressions must match PRIORITY_KEY and LASTMOD_KEY in activities/sitemaps.ts exactly.
CREATE INDEX IF NOT EXISTS crawl_urls_sitemap_order_idx ON crawl_urls (
  crawl_id,
  origin,
  (-COALESCE(priority, -1)),
  ('3000-01-01T00:00:00Z'::timestamptz - COALESCE(lastmod, '1000-01-01T00:00:00Z'::timestamptz)),
  url
) WHERE source = 'sitemap';
