-- Which fetch of the crawl carried a visit's verdict to the crawl's counts: the URL it asked for.
-- A page can be reached by several fetches in one crawl (its own URL, a redirect alias, a moved
-- page's old URL); only the fetch named here reports the verdict again (a retry of itself), so the
-- crawl summary counts each row of `page_changes` once. NULL: recorded by a fetch that reported
-- another page's verdict (a moved page's target), left for the next fetch that reaches the page.
ALTER TABLE page_changes ADD COLUMN IF NOT EXISTS counted_by text;
