-- Crawls, pages, the link graph, the per-crawl URL ledger and the fetch log.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE crawls (
  id          text PRIMARY KEY,
  spec        jsonb NOT NULL,
  status      text NOT NULL DEFAULT 'running',
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  summary     jsonb
);

-- One row per canonical URL: the corpus. A later crawl of the same URL updates it in place.
CREATE TABLE pages (
  id             bigserial PRIMARY KEY,
  url            text NOT NULL UNIQUE,
  final_url      text NOT NULL,
  origin         text NOT NULL,
  crawl_id       text NOT NULL,
  depth          integer NOT NULL,
  status         integer,
  content_type   text,
  charset        text,
  etag           text,
  last_modified  text,
  content_hash   text,
  body_bytes     integer,
  body_gz        bytea,
  title          text,
  ttfb_ms        integer,
  total_ms       integer,
  fetched_at     timestamptz NOT NULL DEFAULT now(),
  indexed_at     timestamptz,
  first_seen_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pages_origin_idx ON pages (origin);
CREATE INDEX pages_crawl_idx ON pages (crawl_id);

-- The hyperlink graph; a page's outgoing edges are replaced whenever it is fetched again.
CREATE TABLE links (
  from_page_id bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  to_url       text NOT NULL,
  anchor_text  text NOT NULL DEFAULT '',
  rel          text NOT NULL DEFAULT '',
  nofollow     boolean NOT NULL DEFAULT false,
  tag          text NOT NULL DEFAULT 'a',
  PRIMARY KEY (from_page_id, to_url, anchor_text)
);
CREATE INDEX links_to_url_idx ON links (to_url);

-- Every URL a crawl admitted, claimed by the first page that discovered it. This is the crawl's
-- durable seen-set: the fetch activity inserts discoveries here idempotently and hands the
-- origin workflows only URLs that are new, so workflow history never carries a URL twice.
CREATE TABLE crawl_urls (
  crawl_id        text NOT NULL,
  url             text NOT NULL,
  origin          text NOT NULL,
  depth           integer NOT NULL,
  discovered_from text,
  discovered_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (crawl_id, url)
);
CREATE INDEX crawl_urls_from_idx ON crawl_urls (crawl_id, discovered_from);

-- One row per request attempt: what was asked, what came back, how long it took.
CREATE TABLE fetches (
  id           bigserial PRIMARY KEY,
  crawl_id     text NOT NULL,
  url          text NOT NULL,
  final_url    text,
  outcome      text NOT NULL,
  status       integer,
  bytes        integer NOT NULL DEFAULT 0,
  ttfb_ms      integer,
  total_ms     integer,
  error        text,
  started_at   timestamptz NOT NULL
);
CREATE INDEX fetches_crawl_idx ON fetches (crawl_id);
