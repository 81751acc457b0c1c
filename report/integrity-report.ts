/**
 * The corpus's integrity report (seed 003 §G): what the store holds and every way its parts can
 * disagree — pages extracted but never chunked, chunks without vectors, vectors of another model or
 * dimension, pages no stored page links to, duplicate clusters, removed pages, and the URLs that
 * were blocked or failed, by reason. Checks marked `inconsistent` make the report fail; the others
 * describe the corpus. Read-only: plain SQL any `psql` user can repeat.
 */
import type { Database } from '../db/database';
import { NOT_FAILURES } from './crawl-report';

/** How many examples a check lists (URLs, ids). */
const SAMPLE = 10;

export interface IntegrityCheck {
  name: string;
  /** True when a non-zero count means the store is inconsistent (a failed report). */
  inconsistent: boolean;
  count: number;
  description: string;
  samples: string[];
}

export interface IntegrityReport {
  ok: boolean;
  totals: {
    pages: number;
    pagesWithMarkdown: number;
    pagesIndexed: number;
    chunks: number;
    vectors: number;
    links: number;
    summaries: number;
    embeddingModel: { name: string; dimension: number; columnDimension: number } | null;
  };
  checks: IntegrityCheck[];
  duplicateClusters: Array<{ contentSha256: string; urls: string[] }>;
  fetchProblems: Array<{ outcome: string; status: number | null; count: number; samples: string[] }>;
}

async function scalar(db: Database, sql: string): Promise<number> {
  const { rows } = await db.query<{ n: number | string }>(sql);
  return Number(rows[0]?.n ?? 0);
}

async function check(
  db: Database,
  name: string,
  description: string,
  inconsistent: boolean,
  sql: string,
): Promise<IntegrityCheck> {
  // `sql` selects one text column `item`; the count comes from the same query, samples are its first rows.
  const { rows } = await db.query<{ item: string; total: number | string }>(
    `SELECT item, count(*) OVER () AS total FROM (${sql}) q ORDER BY item LIMIT ${SAMPLE}`,
  );
  return {
    name,
    inconsistent,
    count: Number(rows[0]?.total ?? 0),
    description,
    samples: rows.map((row) => row.item),
  };
}

async function hasColumn(db: Database, table: string, column: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2',
    [table, column],
  );
  return rows.length > 0;
}

export async function integrityReport(db: Database): Promise<IntegrityReport> {
  const model = (
    await db.query<{ name: string; dimension: number; column_dimension: number }>(
      `SELECT m.name, m.dimension,
              (SELECT atttypmod FROM pg_attribute
                WHERE attrelid = 'chunks'::regclass AND attname = 'embedding' AND NOT attisdropped) AS column_dimension
         FROM embedding_model m WHERE m.singleton`,
    )
  ).rows[0];
  const totals: IntegrityReport['totals'] = {
    pages: await scalar(db, 'SELECT count(*) AS n FROM pages'),
    pagesWithMarkdown: await scalar(
      db,
      "SELECT count(*) AS n FROM pages WHERE markdown IS NOT NULL AND btrim(markdown) <> ''",
    ),
    pagesIndexed: await scalar(db, 'SELECT count(*) AS n FROM pages WHERE indexed_at IS NOT NULL'),
    chunks: await scalar(db, 'SELECT count(*) AS n FROM chunks'),
    vectors: await scalar(db, 'SELECT count(*) AS n FROM chunks WHERE embedding IS NOT NULL'),
    links: await scalar(db, 'SELECT count(*) AS n FROM links'),
    summaries: await scalar(db, 'SELECT count(*) AS n FROM page_summaries WHERE summary IS NOT NULL'),
    embeddingModel: model
      ? { name: model.name, dimension: model.dimension, columnDimension: Number(model.column_dimension) }
      : null,
  };

  const removedColumn = (await hasColumn(db, 'pages', 'removed_at')) ? 'removed_at' : undefined;
  const live = removedColumn ? `p.${removedColumn} IS NULL` : 'true';
  const notDuplicate = (await hasColumn(db, 'pages', 'duplicate_kind')) ? 'p.duplicate_kind IS NULL' : 'true';
  const checks: IntegrityCheck[] = [
    await check(
      db,
      'pagesWithoutChunks',
      'pages extracted from their current body, with Markdown and not noindex nor a duplicate, but without a single chunk',
      true,
      // A duplicate (exact or near) keeps its extraction and, by design, no chunks: its original is indexed.
      `SELECT p.url AS item FROM pages p
        WHERE ${live} AND p.markdown IS NOT NULL AND btrim(p.markdown) <> '' AND NOT p.noindex
          AND ${notDuplicate}
          AND p.extracted_hash IS NOT DISTINCT FROM p.content_hash
          AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id)`,
    ),
    await check(
      db,
      'chunksWithoutVectors',
      'chunks with no embedding (a crawl still running embeds them; otherwise the embed step was lost)',
      true,
      `SELECT p.url || '#chunk-' || c.position AS item FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE c.embedding IS NULL`,
    ),
    await check(
      db,
      'vectorsOfAnotherModel',
      'chunks whose vector was made by another model, or has another dimension, than the recorded embedding model',
      true,
      `SELECT p.url || '#chunk-' || c.position || ' (' || coalesce(c.embedding_model, 'no model') || ', '
              || vector_dims(c.embedding) || ' dimensions)' AS item
         FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE c.embedding IS NOT NULL
          AND (NOT EXISTS (SELECT 1 FROM embedding_model m
                            WHERE m.name = c.embedding_model AND m.dimension = vector_dims(c.embedding)))`,
    ),
    await check(
      db,
      'modelDimensionMismatch',
      "the recorded embedding model's dimension differs from the vector column's",
      true,
      `SELECT m.name || ': ' || m.dimension || ' recorded, column holds ' || a.atttypmod AS item
         FROM embedding_model m, pg_attribute a
        WHERE a.attrelid = 'chunks'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
          AND a.atttypmod <> m.dimension`,
    ),
    await check(
      db,
      'orphanPages',
      'pages found by following a link (depth > 0) that no stored page links to any more: lost edges',
      true,
      `SELECT p.url AS item FROM pages p
        WHERE ${live} AND p.depth > 0
          AND NOT EXISTS (SELECT 1 FROM links l WHERE l.to_url IN (p.url, p.final_url) AND l.from_page_id <> p.id)
          AND NOT EXISTS (SELECT 1 FROM crawl_urls u WHERE u.url = p.url
                           AND (u.discovered_from IS NULL OR u.discovered_from LIKE 'sitemap:%'))`,
    ),
    await check(
      db,
      'staleSummaries',
      'summaries made from an earlier extraction of their page (summarised again on its next pass)',
      false,
      // A removed page is never summarised again: its summary is history, not a pass behind.
      `SELECT p.url AS item FROM page_summaries s JOIN pages p ON p.id = s.page_id
        WHERE ${live} AND s.source_hash IS DISTINCT FROM p.extracted_hash`,
    ),
    await check(
      db,
      'summaryFailures',
      'pages whose LLM answer failed validation (recorded, not retried)',
      false,
      `SELECT p.url || ': ' || s.error AS item FROM page_summaries s JOIN pages p ON p.id = s.page_id
        WHERE s.error IS NOT NULL`,
    ),
    await check(
      db,
      'indexedPagesWithoutSummary',
      'indexed pages with no summary yet',
      false,
      `SELECT p.url AS item FROM pages p WHERE ${live} AND p.indexed_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM page_summaries s WHERE s.page_id = p.id)`,
    ),
    await check(
      db,
      'danglingLinks',
      'links to URLs of a crawled origin that are not stored pages (out of budget, blocked or failed)',
      false,
      `SELECT DISTINCT l.to_url AS item FROM links l
        WHERE EXISTS (SELECT 1 FROM pages o WHERE l.to_url LIKE o.origin || '/%' LIMIT 1)
          AND NOT EXISTS (SELECT 1 FROM pages t WHERE t.url = l.to_url OR t.final_url = l.to_url)`,
    ),
  ];
  if (removedColumn) {
    checks.push(
      await check(
        db,
        'removedPages',
        'pages a recrawl found gone from their site (kept, out of search)',
        false,
        `SELECT p.url AS item FROM pages p WHERE p.${removedColumn} IS NOT NULL`,
      ),
    );
  }

  const clusters = await db.query<{ content_hash: string; urls: string[] }>(
    `SELECT content_hash, array_agg(url ORDER BY url) AS urls FROM pages
      WHERE content_hash IS NOT NULL AND ${live.replace('p.', '')}
      GROUP BY content_hash HAVING count(*) > 1 ORDER BY count(*) DESC, content_hash LIMIT 100`,
  );
  // URLs by their last fetch, as `gleaner status` counts a crawl's failures: a 304, a skipped body
  // or a 429 fetched again later is no failure, and a URL fetched by every recrawl counts once.
  const problems = await db.query<{
    outcome: string;
    status: number | null;
    n: number | string;
    samples: string[];
  }>(
    `WITH last AS (
       SELECT DISTINCT ON (url) url, outcome, status
         FROM fetches WHERE outcome NOT LIKE 'sitemap-%'
        ORDER BY url, id DESC)
     SELECT outcome, status, count(*) AS n, (array_agg(url ORDER BY url))[1:${SAMPLE}] AS samples
       FROM last WHERE outcome <> ALL($1::text[])
      GROUP BY outcome, status ORDER BY count(*) DESC, outcome, status`,
    [NOT_FAILURES],
  );
  return {
    ok: checks.every((c) => !c.inconsistent || c.count === 0),
    totals,
    checks,
    duplicateClusters: clusters.rows.map((row) => ({ contentSha256: row.content_hash, urls: row.urls })),
    fetchProblems: problems.rows.map((row) => ({
      outcome: row.outcome,
      status: row.status,
      count: Number(row.n),
      samples: row.samples,
    })),
  };
}
