-- A page is also found by the URL it was finally served from (after redirects): `fetch_page` (MCP)
-- and `GET /pages?url=` look there when the URL is not a page's own. Without an index a miss on
-- both read every page row.
CREATE INDEX IF NOT EXISTS pages_final_url_idx ON pages (final_url);
