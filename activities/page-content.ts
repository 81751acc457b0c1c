/**
 * The page pipeline's CPU stage: stored body → extraction (Markdown, metadata, strategy) →
 * heading-aware chunks, written in one short transaction. Reads and writes Postgres only; the
 * workflow passes a page id and gets counts back, never content.
 *
 * Idempotent: a page whose extraction was made from its current body (`extracted_hash =
 * content_hash`) is skipped, and a re-chunked page keeps the vector of every chunk whose hash is
 * unchanged, so only new text is embedded again. A body whose analysis failed for good (past its
 * deadline, out of memory: `extract_failed_hash = content_hash`, migration 024) is not analysed
 * again: the page fails at once with the failure it had, until its body changes.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure, asyncLocalStorage } from '@temporalio/activity';
import type { Database, Queryable } from '../db/database';
import type { MarkdownChunk } from '../domain/chunking';
import { EMBEDDING_INPUT_FORMAT } from '../domain/embedding-text';
import { textSearchConfigFor } from '../domain/text-search-config';
import { observeExtract } from '../infra/metrics';
import { settleNearDuplicate } from './near-duplicates';
import type { PageAnalysis, PageAnalysisInput } from './page-analysis';
import { analysePageInThread, type PageTaskOptions, pageDeadlineMs } from './page-analysis-pool';
import { settlePageQuality } from './quality-flags';
import { loadSiteTemplate, recordPageBlocks, templateSignature } from './site-templates';
import { ThreadDeadlineError } from './thread-deadline';
import type { ProcessPageContentInput, ProcessPageContentResult } from './types';

/**
 * The page to process and, from a crawl's page stage (activities/page-batches.ts), the crawl asking:
 * a failure is written to the fetch log under that crawl. Without it (a page workflow of a run
 * recorded before batches, a template re-clean), the crawl that last visited the page.
 */
export type PageContentInput = ProcessPageContentInput & { crawlId?: string };

export interface PageContentDeps {
  db: Database;
  /** Decode, extract and chunk one page. @default analysePageInThread (a worker-thread pool) */
  analyse?: (input: PageAnalysisInput, options: PageTaskOptions) => Promise<PageAnalysis>;
  /** Longest one page's analysis may run. @default pageDeadlineMs() (GLEANER_PAGE_DEADLINE_MS, else 30 s) */
  deadlineMs?: number;
}

/** The failure type, and the reason in the fetch log, of a page whose analysis ran past its deadline. */
export const EXTRACT_TIMEOUT = { type: 'ExtractTimeout', outcome: 'extract-timeout' } as const;
/** The failure type of a page whose analysis needed more memory than a page may use. */
const EXTRACTION_FAILED = 'ExtractionFailed';

interface PageRow {
  id: number;
  final_url: string;
  content_hash: string | null;
  extracted_hash: string | null;
  extract_failed_hash: string | null;
  extract_failure: string | null;
  charset: string | null;
  content_type: string | null;
  body_gz: Buffer | Uint8Array | null;
  noindex: boolean;
  duplicate_kind: string | null;
  origin: string;
  template_keys: string[] | null;
  template_signature: string | null;
}

/** Rows per INSERT: PARAMS_PER_CHUNK parameters each stays far below Postgres's 65,535-parameter limit. */
const INSERT_BATCH_ROWS = 500;
const PARAMS_PER_CHUNK = 16;

export function createPageContent({ db, analyse = analysePageInThread, deadlineMs }: PageContentDeps) {
  return {
    async processPageContent({ pageId, crawlId }: PageContentInput): Promise<ProcessPageContentResult> {
      const found = await db.query<PageRow>(
        `SELECT id, final_url, content_hash, extracted_hash, extract_failed_hash, extract_failure, charset, content_type, body_gz, noindex, duplicate_kind,
                origin, template_keys, template_signature FROM pages WHERE id = $1`,
        [pageId],
      );
      const page = found.rows[0];
      if (!page) throw ApplicationFailure.nonRetryable(`page ${pageId} does not exist`, 'PageNotFound');
      // The same body failed before: it would fail again, at the cost of another deadline.
      if (page.content_hash !== null && page.extract_failed_hash === page.content_hash)
        throw await failedBefore(db, page, crawlId);
      // The origin's site template as learnt so far (activities/site-templates.ts).
      const template = await loadSiteTemplate(db, page.origin);
      // Unchanged and cleaned with a template that removes the same blocks: nothing to redo. A page
      // whose keys the template now treats differently is processed again (re-clean); pages
      // processed before templates existed (no keys) are left as they are until their body changes.
      const cleaned =
        page.template_keys === null ||
        templateSignature(template, page.template_keys) === (page.template_signature ?? '');
      if (page.content_hash !== null && page.extracted_hash === page.content_hash && cleaned) {
        if (page.duplicate_kind === 'near') return { chunks: 0, toEmbed: 0, skipped: true, duplicate: true };
        return { ...(await countChunks(db, pageId)), skipped: true };
      }

      const analysis = await analyseOrFail(
        db,
        { pageId, contentHash: page.content_hash, ...(crawlId ? { crawlId } : {}) },
        analyse,
        {
          bodyGz: page.body_gz,
          charset: page.charset,
          url: page.final_url,
          noindex: page.noindex,
          // Documents (PDF, Markdown, text, DOCX) go through their converters; HTML is unchanged.
          contentType: page.content_type,
          template,
        },
        deadlineMs ?? pageDeadlineMs(),
      );
      const { extracted, chunks, durationMs } = analysis;
      observeExtract(durationMs);
      // The page's blocks count towards its origin's template (by difference: retries change nothing).
      const siteTemplate = analysis.template;
      if (siteTemplate) await recordPageBlocks(db, pageId, page.origin, siteTemplate.keys);

      const language = extracted.metadata.language ?? null;
      const tsConfig = textSearchConfigFor(extracted.metadata.language);
      const outcome = await db.transaction(async (tx) => {
        // A re-cleaned page (same body, other Markdown) is summarised again from its new chunks.
        await tx.query(
          `DELETE FROM page_summaries s USING pages p
            WHERE s.page_id = $1 AND p.id = $1 AND p.markdown IS DISTINCT FROM $2`,
          [pageId, extracted.markdown],
        );
        await tx.query(
          `UPDATE pages SET template_signature = $2, template_blocks_removed = $3, template_kept_words = $4
            WHERE id = $1`,
          [
            pageId,
            siteTemplate
              ? templateSignature(
                  template,
                  siteTemplate.keys.map((block) => block.key),
                )
              : null,
            siteTemplate?.removed ?? null,
            siteTemplate?.keptWords ?? null,
          ],
        );
        await tx.query(
          `UPDATE pages SET markdown = $2, metadata = $3, language = $4, word_count = $5, extract_strategy = $6,
                  extract_confidence = $7, title = COALESCE(NULLIF($8, ''), title), extracted_hash = content_hash,
                  extracted_at = now(), extract_failed_hash = NULL, extract_failure = NULL
            WHERE id = $1`,
          [
            pageId,
            extracted.markdown,
            JSON.stringify(extracted.metadata),
            language,
            extracted.metadata.wordCount,
            extracted.strategy,
            extracted.confidence,
            extracted.title,
          ],
        );
        // A near copy of a live page keeps its extraction (and SimHash) but no chunks.
        if (
          !page.noindex &&
          (await settleNearDuplicate(tx, pageId, extracted.text, analysis.fingerprint)) !== undefined
        )
          return 'duplicate';
        const reused = await replaceChunks(tx, pageId, chunks, tsConfig, analysis.document?.chunkPages);
        // The quality gate: flags with reasons, language, chunks left out of default search (C2).
        await settlePageQuality(tx, pageId, analysis);
        return reused;
      });
      if (outcome === 'duplicate') return { chunks: 0, toEmbed: 0, skipped: false, duplicate: true };
      return { chunks: chunks.length, toEmbed: chunks.length - outcome, skipped: false };
    },
  };
}

/** The page being analysed, as a failure is recorded for it. */
interface AnalysedPage {
  pageId: number;
  /** The body analysed: its failure is remembered for this hash only. */
  contentHash: string | null;
  /** The crawl asking (PageContentInput). */
  crawlId?: string;
}

/**
 * A thread that dies analysing a page (out of memory on a pathological document) or runs past the
 * page's deadline would do so again on every retry: report it once, as a failure of this page only.
 * A timed-out page is also written to the fetch log as `extract-timeout`, so the store says which
 * pages were not indexed and why (`gleaner report`, the crawl's failures by reason). Either failure
 * is remembered with the body's hash, so a recrawl of the same body does not analyse it again.
 */
async function analyseOrFail(
  db: Database,
  page: AnalysedPage,
  analyse: NonNullable<PageContentDeps['analyse']>,
  input: PageAnalysisInput,
  deadlineMs: number,
): Promise<PageAnalysis> {
  // Outside an activity (tests, tools) there is no cancellation to follow.
  const signal = asyncLocalStorage.getStore()?.cancellationSignal;
  try {
    return await analyse(input, { deadlineMs, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (error instanceof ThreadDeadlineError) {
      const message = `${EXTRACT_TIMEOUT.outcome}: ${error.message}`;
      await rememberFailure(db, page, message);
      await recordExtractTimeout(db, page.pageId, message, page.crawlId);
      throw ApplicationFailure.nonRetryable(message, EXTRACT_TIMEOUT.type);
    }
    const code = (error as { code?: string }).code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      const message = `extracting ${input.url} needed more memory than a page may use: ${(error as Error).message}`;
      await rememberFailure(db, page, message);
      throw ApplicationFailure.nonRetryable(message, EXTRACTION_FAILED);
    }
    throw error;
  }
}

/** Remembers that this body's analysis failed for good (cleared when an analysis succeeds). */
async function rememberFailure(db: Database, page: AnalysedPage, message: string): Promise<void> {
  if (page.contentHash === null) return;
  await db.query(
    `UPDATE pages SET extract_failed_hash = $2, extract_failure = $3
      WHERE id = $1 AND content_hash = $2`,
    [page.pageId, page.contentHash, message],
  );
}

/**
 * The failure a body had before, without analysing it again. A timeout goes to the fetch log of the
 * crawl asking as it did the first time, so the crawl's errors and failures by reason agree.
 */
async function failedBefore(
  db: Database,
  page: Pick<PageRow, 'id' | 'extract_failure'>,
  crawlId: string | undefined,
): Promise<ApplicationFailure> {
  const message =
    page.extract_failure ?? `${EXTRACT_TIMEOUT.outcome}: an earlier analysis of this body failed`;
  if (message.startsWith(`${EXTRACT_TIMEOUT.outcome}:`)) {
    await recordExtractTimeout(db, page.id, message, crawlId);
    return ApplicationFailure.nonRetryable(message, EXTRACT_TIMEOUT.type);
  }
  return ApplicationFailure.nonRetryable(message, EXTRACTION_FAILED);
}

/**
 * One line in the fetch log per crawl and page, however often the page is retried, under the crawl
 * asking, else the crawl that last visited the page (a 304 leaves `pages.crawl_id` to the crawl
 * that stored the body, so it is the last resort only).
 */
async function recordExtractTimeout(
  db: Database,
  pageId: number,
  message: string,
  crawlId: string | undefined,
): Promise<void> {
  await db.query(
    `WITH page AS (
       SELECT p.url, p.final_url, coalesce(p.body_bytes, 0) AS bytes,
              coalesce($4::text,
                       (SELECT c.crawl_id FROM page_changes c WHERE c.page_id = p.id
                         ORDER BY c.recorded_at DESC LIMIT 1),
                       p.crawl_id) AS crawl_id
         FROM pages p WHERE p.id = $1)
     INSERT INTO fetches (crawl_id, url, final_url, outcome, bytes, error, started_at)
     SELECT page.crawl_id, page.url, page.final_url, $2, page.bytes, $3, now() FROM page
      WHERE NOT EXISTS (SELECT 1 FROM fetches f
                         WHERE f.crawl_id = page.crawl_id AND f.url = page.url AND f.outcome = $2 AND f.error = $3)`,
    [pageId, EXTRACT_TIMEOUT.outcome, message, crawlId ?? null],
  );
}

/** The chunk's identity: its text and where it sits in the heading tree. */
export function chunkHash(chunk: Pick<MarkdownChunk, 'headingPath' | 'text'>): string {
  return createHash('sha256')
    .update(chunk.headingPath.join('\u001f'))
    .update('\u001e')
    .update(chunk.text)
    .digest('hex');
}

/**
 * Replaces the page's chunks with `chunks`, carrying over the vector of every chunk whose hash is
 * unchanged. Returns how many vectors were carried over.
 */
async function replaceChunks(
  tx: Queryable,
  pageId: number,
  chunks: readonly MarkdownChunk[],
  tsConfig: string,
  /** A PDF's pages of each chunk, by position in `chunks` (chunks.page_first/page_last, migration 017). */
  chunkPages?: readonly ({ first: number; last: number } | undefined)[],
): Promise<number> {
  const previous = await tx.query<{
    chunk_hash: string;
    embedding: string;
    embedding_model: string;
    embedding_input: string | null;
  }>(
    `SELECT chunk_hash, embedding::text AS embedding, embedding_model, embedding_input FROM chunks
      WHERE page_id = $1 AND embedding IS NOT NULL`,
    [pageId],
  );
  const vectors = new Map(previous.rows.map((row) => [row.chunk_hash, row]));
  await tx.query('DELETE FROM chunks WHERE page_id = $1', [pageId]);

  // Ids drawn first, so each row is written once with its neighbours: an UPDATE of prev_id/next_id
  // afterwards rewrote every row, computing its tsvector again and adding a new entry to every index
  // (the HNSW one too, for each carried-over vector). The embedded store has no autovacuum to reclaim
  // the dead versions: on the demo corpus (578 chunks) the chunks heap is 214 pages instead of 321
  // and its indexes 412 instead of 523.
  const ids = await drawChunkIds(tx, chunks.length);
  const byPosition = chunks
    .map((chunk, index) => ({ index, position: chunk.position }))
    .sort((a, b) => a.position - b.position)
    .map((entry) => entry.index);
  const prev = new Array<string | null>(chunks.length).fill(null);
  const next = new Array<string | null>(chunks.length).fill(null);
  byPosition.forEach((index, rank) => {
    prev[index] = rank > 0 ? (ids[byPosition[rank - 1] as number] ?? null) : null;
    next[index] = ids[byPosition[rank + 1] as number] ?? null;
  });

  let reused = 0;
  for (let start = 0; start < chunks.length; start += INSERT_BATCH_ROWS) {
    const batch = chunks.slice(start, start + INSERT_BATCH_ROWS);
    const params: (string | number | string[] | null)[] = [];
    const tuples = batch.map((chunk, index) => {
      const hash = chunkHash(chunk);
      const kept = vectors.get(hash);
      if (kept) reused++;
      params.push(
        pageId,
        chunk.position,
        hash,
        chunk.headingPath,
        chunk.headingPath.join(' > '),
        chunk.text,
        chunk.tokenCount,
        kept?.embedding ?? null,
        kept?.embedding_model ?? null,
        tsConfig,
        kept?.embedding_input ?? null,
        chunkPages?.[start + index]?.first ?? null,
        chunkPages?.[start + index]?.last ?? null,
        ids[start + index] as string,
        prev[start + index] ?? null,
        next[start + index] ?? null,
      );
      const p = params.length - PARAMS_PER_CHUNK;
      return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 10}::regconfig,
               $${p + 8}::vector, $${p + 9}, $${p + 11}, CASE WHEN $${p + 8}::text IS NULL THEN NULL ELSE now() END,
               $${p + 12}::int, $${p + 13}::int, $${p + 14}::bigint, $${p + 15}::bigint, $${p + 16}::bigint)`;
    });
    await tx.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count, ts_config,
                           embedding, embedding_model, embedding_input, embedded_at, page_first, page_last,
                           id, prev_id, next_id)
       VALUES ${tuples.join(', ')}`,
      params,
    );
  }
  return reused;
}

/** `count` new ids from the chunks' own sequence, in order. */
async function drawChunkIds(tx: Queryable, count: number): Promise<string[]> {
  if (count === 0) return [];
  const drawn = await tx.query<{ id: string }>(
    `SELECT nextval(pg_get_serial_sequence('chunks', 'id'))::text AS id FROM generate_series(1, $1::int) AS n ORDER BY n`,
    [count],
  );
  return drawn.rows.map((row) => row.id);
}

async function countChunks(
  db: Database,
  pageId: number,
): Promise<{ chunks: number; toEmbed: number; indexed: boolean }> {
  // A vector from another model than the recorded one (no recorded model: all do), or made from
  // another input format than this code embeds, counts as missing: an unchanged page is embedded
  // again after either changes.
  const counted = await db.query<{ chunks: string; unembedded: string; indexed: boolean }>(
    `SELECT count(*) AS chunks,
            count(*) FILTER (WHERE embedding IS NULL
                               OR embedding_model IS DISTINCT FROM (SELECT name FROM embedding_model WHERE singleton)
                               OR embedding_input IS DISTINCT FROM $2) AS unembedded,
            (SELECT indexed_at IS NOT NULL FROM pages WHERE id = $1) AS indexed
       FROM chunks WHERE page_id = $1`,
    [pageId, EMBEDDING_INPUT_FORMAT],
  );
  const row = counted.rows[0];
  return {
    chunks: Number(row?.chunks ?? 0),
    toEmbed: Number(row?.unembedded ?? 0),
    indexed: row?.indexed === true,
  };
}
