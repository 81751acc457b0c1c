-- A page whose analysis failed for good (past its deadline, or out of memory) remembers the body it
-- failed on: `extract_failed_hash` is the content hash, `extract_failure` the reason as the fetch log
-- has it. A recrawl that finds the same body (304, or 200 with the same hash) does not analyse it
-- again (activities/recrawl-visits.ts, page-content.ts); a changed body is analysed as any other.
ALTER TABLE pages ADD COLUMN IF NOT EXISTS extract_failed_hash text;
ALTER TABLE pages ADD COLUMN IF NOT EXISTS extract_failure text;
