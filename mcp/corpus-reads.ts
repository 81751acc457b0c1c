/**
 * What the MCP tools read from the store besides search: one page by URL, the sources (origins and
 * crawls) and one crawl's status. Plain SQL on the `Database` seam, so the same reads run on native
 * Postgres, on PGlite and through a running gleaner's socket.
 */
import type { Database } from '../db/database';
import { readCrawlReport, type StoredCrawlReport } from '../report/crawl-report';

export interface StoredPage {
  url: string;
  finalUrl: string;
  title: string | null;
  fetchedAt: string | null;
  /** SHA-256 of the fetched body (the export's `content_sha256`). */
  contentSha256: string | null;
  language: string | null;
  summary: string | null;
  tags: string[];
  markdown: string | null;
  removedAt: string | null;
  removedReason: string | null;
  duplicateOf: string | null;
}

interface PageRow {
  url: string;
  final_url: string;
  title: string | null;
  fetched_at: Date | string | null;
  content_hash: string | null;
  language: string | null;
  summary: string | null;
  tags: string[] | null;
  markdown: string | null;
  removed_at: Date | string | null;
  removed_reason: string | null;
  duplicate_of_url: string | null;
}

const iso = (value: Date | string | null): string | null =>
  value === null ? null : new Date(value).toISOString();

/** The page stored under a canonical URL, or under that URL as where a redirect ended. */
export async function readPageByUrl(db: Database, canonicalUrl: string): Promise<StoredPage | undefined> {
  const { rows } = await db.query<PageRow>(
    `SELECT p.url, p.final_url, p.title, p.fetched_at, p.content_hash, p.language, s.summary, s.tags,
            p.markdown, p.removed_at, p.removed_reason, d.url AS duplicate_of_url
       FROM pages p
       LEFT JOIN page_summaries s ON s.page_id = p.id
       LEFT JOIN pages d ON d.id = p.duplicate_of
      WHERE p.id = (SELECT id FROM pages WHERE url = $1
                    UNION ALL SELECT id FROM pages WHERE final_url = $1 LIMIT 1)`,
    [canonicalUrl],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    url: row.url,
    finalUrl: row.final_url,
    title: row.title,
    fetchedAt: iso(row.fetched_at),
    contentSha256: row.content_hash,
    language: row.language,
    summary: row.summary,
    tags: row.tags ?? [],
    markdown: row.markdown,
    removedAt: iso(row.removed_at),
    removedReason: row.removed_reason,
    duplicateOf: row.duplicate_of_url,
  };
}

export interface OriginSource {
  origin: string;
  pages: number;
  lastFetchedAt: string | null;
}

export interface CrawlSource {
  crawlId: string;
  status: string;
  seeds: string[];
  startedAt: string;
  finishedAt: string | null;
  /** Pages whose stored copy this crawl fetched last. */
  pages: number;
}

export interface Sources {
  origins: OriginSource[];
  /** Origins with live pages in all (the list holds the `ORIGINS_LISTED` largest). */
  originsTotal: number;
  crawls: CrawlSource[];
  /** Crawls recorded in all (the list holds the newest `CRAWLS_LISTED`). */
  crawlsTotal: number;
}

export const CRAWLS_LISTED = 50;
/** A broad crawl has thousands of origins; an agent's context wants the largest, and the count. */
export const ORIGINS_LISTED = 200;

export async function listSources(db: Database): Promise<Sources> {
  const origins = await db.query<{ origin: string; pages: number; last: Date | string | null }>(
    `SELECT origin, count(*)::int AS pages, max(fetched_at) AS last
       FROM pages WHERE removed_at IS NULL
      GROUP BY origin ORDER BY count(*) DESC, origin LIMIT ${ORIGINS_LISTED}`,
  );
  const originsTotal = await db.query<{ n: number }>(
    'SELECT count(DISTINCT origin)::int AS n FROM pages WHERE removed_at IS NULL',
  );
  const crawls = await db.query<{
    id: string;
    status: string;
    spec: { seeds?: string[] } | null;
    started_at: Date | string;
    finished_at: Date | string | null;
    pages: number;
  }>(
    `SELECT c.id, c.status, c.spec, c.started_at, c.finished_at,
            (SELECT count(*)::int FROM pages p WHERE p.crawl_id = c.id AND p.removed_at IS NULL) AS pages
       FROM crawls c ORDER BY c.started_at DESC, c.id LIMIT ${CRAWLS_LISTED}`,
  );
  const total = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM crawls');
  return {
    origins: origins.rows.map((row) => ({
      origin: row.origin,
      pages: Number(row.pages),
      lastFetchedAt: iso(row.last),
    })),
    originsTotal: Number(originsTotal.rows[0]?.n ?? 0),
    crawls: crawls.rows.map((row) => ({
      crawlId: row.id,
      status: row.status,
      seeds: row.spec?.seeds ?? [],
      startedAt: new Date(row.started_at).toISOString(),
      finishedAt: iso(row.finished_at),
      pages: Number(row.pages),
    })),
    crawlsTotal: Number(total.rows[0]?.n ?? 0),
  };
}

/** A crawl as the store records it: the figures `gleaner status` shows (report/crawl-report.ts). */
export type StoredCrawlStatus = StoredCrawlReport;

/**
 * A crawl as the store records it (the same figures as `gleaner status`): its row, and while it
 * runs, counts from its fetch log and URL ledger; a finished crawl's summary has the exact ones.
 */
export function readCrawlStatus(db: Database, crawlId: string): Promise<StoredCrawlStatus | undefined> {
  return readCrawlReport(db, crawlId);
}

/** A stored crawl's spec, for a recrawl of the same seeds and scope. */
export async function readCrawlSpec(
  db: Database,
  crawlId: string,
): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.query<{ spec: Record<string, unknown> | null }>(
    'SELECT spec FROM crawls WHERE id = $1',
    [crawlId],
  );
  return rows[0]?.spec ?? undefined;
}
