-- Page batches (issue 16 item 2): a child workflow processes a batch of one origin's pages, so the
-- workflow id no longer keeps a page from being processed twice in one crawl (a redirect alias
-- reaches the same page row from two URLs). The batch claims its pages here first: one row per
-- crawl and page, owned by the batch (its workflow id) that claimed it. A retried claim by the same
-- batch finds its own rows again; a page another batch owns is reported as not indexed by this one.
CREATE TABLE IF NOT EXISTS crawl_pages_processed (
  crawl_id   text NOT NULL,
  page_id    bigint NOT NULL,
  batch_id   text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (crawl_id, page_id)
);
