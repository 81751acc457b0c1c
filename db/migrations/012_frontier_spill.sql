-- Frontier spill (issue 19 item 4): link-discovered URLs an origin workflow had no room for in
-- its in-memory frontier wait here (`spilled`) instead of in workflow history, and are taken back
-- in pages as the frontier drains. `spill_take` names the page that took a row, so a retried take
-- answers with the same rows and a URL is handed to the workflow once.
ALTER TABLE crawl_urls ADD COLUMN IF NOT EXISTS spilled boolean NOT NULL DEFAULT false;
ALTER TABLE crawl_urls ADD COLUMN IF NOT EXISTS spill_take integer;
-- Waiting rows in the order they come back: shallowest first, then in discovery order.
CREATE INDEX IF NOT EXISTS crawl_urls_spill_waiting_idx ON crawl_urls (crawl_id, origin, depth, discovered_at, url)
  WHERE spilled AND spill_take IS NULL;
CREATE INDEX IF NOT EXISTS crawl_urls_spill_take_idx ON crawl_urls (crawl_id, origin, spill_take)
  WHERE spill_take IS NOT NULL;
