/**
 * What the store says about a crawl, without Temporal or workers: its row, page counts as pages
 * finish, and its failures grouped by reason with sample URLs (from the `fetches` log).
 */
import type { Database } from '../db/database';

export interface FailureGroup {
  reason: string;
  count: number;
  sampleUrls: string[];
}

export interface StoredCrawlReport {
  crawlId: string;
  status: string;
  seeds: string[];
  startedAt: string;
  finishedAt: string | null;
  pagesFetched: number;
  pagesIndexed: number;
  urlsDiscovered: number;
  failures: FailureGroup[];
  summary: Record<string, unknown> | null;
}

const SAMPLE_URLS = 3;

/**
 * Fetch outcomes that are not failures (a response that is not a page is skipped, not failed).
 * Sitemaps are optional hints, so their outcomes (a missing /sitemap.xml) are left out too.
 */
export const NOT_FAILURES: readonly string[] = [
  'ok',
  'not-modified',
  'unsupported-content-type',
  'redirect-stub',
];

/** The fetch log's outcomes named for what happened. */
const REASON_SQL = `CASE outcome
    WHEN 'network-error' THEN 'unreachable'
    WHEN 'too-large' THEN 'body-too-large'
    WHEN 'http-error' THEN 'http-' || coalesce(status::text, 'error')
    WHEN 'blocked' THEN 'blocked-by-ssrf-guard'
    WHEN 'robots-unreachable-disallow-all' THEN 'robots-txt-unreachable'
    ELSE outcome END`;

/**
 * URLs whose last fetch in the crawl failed, grouped by reason. The last, not any: a 429 or 503 that
 * the crawl fetched again after its Retry-After, and stored, is not a failure of the crawl.
 */
export async function failuresByReason(db: Database, crawlId: string): Promise<FailureGroup[]> {
  const result = await db.query<{ reason: string; count: string; samples: string[] }>(
    `WITH last AS (
       SELECT DISTINCT ON (url) url, outcome, status
         FROM fetches WHERE crawl_id = $1 AND outcome NOT LIKE 'sitemap-%'
        ORDER BY url, id DESC)
     SELECT ${REASON_SQL} AS reason, count(*)::text AS count,
            (array_agg(url ORDER BY url))[1:${SAMPLE_URLS}] AS samples
       FROM last WHERE outcome <> ALL($2::text[])
      GROUP BY 1 ORDER BY count(*) DESC, 1`,
    [crawlId, NOT_FAILURES],
  );
  return result.rows.map((row) => ({
    reason: row.reason,
    count: Number(row.count),
    sampleUrls: row.samples,
  }));
}

export async function readCrawlReport(db: Database, crawlId: string): Promise<StoredCrawlReport | undefined> {
  const crawl = await db.query<{
    status: string;
    spec: { seeds?: string[] } | null;
    started_at: Date;
    finished_at: Date | null;
    summary: Record<string, unknown> | null;
  }>('SELECT status, spec, started_at, finished_at, summary FROM crawls WHERE id = $1', [crawlId]);
  const row = crawl.rows[0];
  if (!row) return undefined;
  // Fetched pages from this crawl's fetch log: a later crawl of the same URLs takes over their rows
  // in `pages`. A finished crawl's own summary has the exact figures.
  const counts = await db.query<{ fetched: string; indexed: string; discovered: string }>(
    `SELECT (SELECT count(DISTINCT url) FROM fetches WHERE crawl_id = $1 AND outcome = 'ok')::text AS fetched,
            (SELECT count(*) FROM pages WHERE crawl_id = $1 AND indexed_at IS NOT NULL)::text AS indexed,
            (SELECT count(*) FROM crawl_urls WHERE crawl_id = $1)::text AS discovered`,
    [crawlId],
  );
  const c = counts.rows[0];
  return {
    crawlId,
    status: row.status,
    seeds: row.spec?.seeds ?? [],
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    pagesFetched: summaryCount(row.summary, 'pagesFetched') ?? Number(c?.fetched ?? 0),
    pagesIndexed: summaryCount(row.summary, 'pagesIndexed') ?? Number(c?.indexed ?? 0),
    urlsDiscovered: Number(c?.discovered ?? 0),
    failures: await failuresByReason(db, crawlId),
    summary: row.summary,
  };
}

function summaryCount(summary: Record<string, unknown> | null, key: string): number | undefined {
  const value = summary?.[key];
  return typeof value === 'number' ? value : undefined;
}

export function formatFailures(failures: FailureGroup[]): string[] {
  if (failures.length === 0) return [];
  const lines = ['  failures by reason:'];
  for (const group of failures) {
    lines.push(
      `    ${group.reason.padEnd(26)} ${String(group.count).padStart(6)}  e.g. ${group.sampleUrls.join(', ')}`,
    );
  }
  return lines;
}
