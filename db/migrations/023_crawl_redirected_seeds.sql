-- Where a crawl's seeds landed on another origin through a redirect (http → https, example.com →
-- www.example.com): each final URL counts as a seed of the crawl's scope (activities/scope-cache.ts),
-- so the site a seed leads to is crawled, not only the seed. Read by every worker that judges scope.
CREATE TABLE IF NOT EXISTS crawl_redirected_seeds (
  crawl_id text NOT NULL,
  url text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (crawl_id, url)
);
