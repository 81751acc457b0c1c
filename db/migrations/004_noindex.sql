-- Pages whose <meta name=robots> or X-Robots-Tag says noindex are kept (for the link graph) but
-- never indexed.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS noindex boolean NOT NULL DEFAULT false;
