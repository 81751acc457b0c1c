-- Which tier produced each stored page and each fetch: 'http' (a plain request) or 'browser'
-- (the DOM after headless Chromium ran the page's scripts).
ALTER TABLE pages ADD COLUMN IF NOT EXISTS fetch_tier text NOT NULL DEFAULT 'http';
ALTER TABLE fetches ADD COLUMN IF NOT EXISTS tier text NOT NULL DEFAULT 'http';
