-- robots.txt per origin (RFC 9309): the parsed rules, cached up to 24 hours. Only answers that
-- decide for the origin are cached (a parsed file, or "4xx: allow all"); an unreachable
-- robots.txt is asked again next time.
CREATE TABLE robots (
  origin      text PRIMARY KEY,
  fetched_at  timestamptz NOT NULL DEFAULT now(),
  http_status integer,
  source      text NOT NULL,
  rules       jsonb NOT NULL,
  error       text
);
