/**
 * The page stage for a batch of one origin's pages (workflows/page-batch-workflow.ts): one activity
 * claims the batch's pages for the crawl and extracts and chunks each, one summarises each. They
 * reuse the single-page steps, so a page in a batch is processed exactly as a page alone; what the
 * batch saves is orchestration (one activity, one history entry, for many pages).
 *
 * Idempotent: the claim is keyed by (crawl, page) and owned by the batch's workflow id, so a
 * retried attempt re-claims its own pages and a page another batch owns is left to that batch; the
 * steps themselves are idempotent per page (activities/page-content.ts, summarize-offline.ts).
 */

import { ApplicationFailure } from '@temporalio/activity';
import type { Database } from '../db/database';
import { withHeartbeat } from './heartbeat';
import type {
  PageContentOutcome,
  ProcessPageContentInput,
  ProcessPageContentResult,
  ProcessPagesContentInput,
  ProcessPagesContentResult,
  SummarizePagesInput,
  SummarizePagesResult,
} from './types';

export interface PageBatchDeps {
  db: Database;
  /** With the batch's crawl, so a page's failure is written to that crawl's fetch log. */
  processPageContent(
    input: ProcessPageContentInput & { crawlId?: string },
  ): Promise<ProcessPageContentResult>;
  summarizePage(input: { pageId: number }): Promise<unknown>;
}

/**
 * Pages of one batch in progress at a time. The page worker runs several batch activities at once
 * (its slots), and every page in progress holds database connections and pool threads that the
 * process's fetches need too: a whole batch at once starved a single-process worker's fetches of
 * pool connections. Two per batch keeps both cores busy.
 */
const PAGES_IN_PROGRESS = 2;

/**
 * Runs `step` for every id, `PAGES_IN_PROGRESS` at a time. A non-retryable failure (or data the
 * store refuses) is that page's own result; any other failure (an outage) fails the activity once the pages started have
 * settled, so Temporal retries the batch.
 */
async function eachPage<T>(
  pageIds: readonly number[],
  step: (pageId: number) => Promise<T>,
): Promise<Array<{ pageId: number; value?: T; error?: string }>> {
  const results: Array<{ pageId: number; value?: T; error?: string }> = [];
  let transient: { error: unknown } | undefined;
  let next = 0;
  const lane = async () => {
    while (next < pageIds.length && !transient) {
      const index = next++;
      const pageId = pageIds[index] as number;
      try {
        results[index] = { pageId, value: await step(pageId) };
      } catch (error) {
        if (isPermanent(error))
          results[index] = {
            pageId,
            error: isDataError(error)
              ? `the store refused this page's data (SQLSTATE ${(error as { code: string }).code}): ${(error as Error).message}`
              : (error as Error).message,
          };
        else transient ??= { error };
      }
    }
  };
  await withHeartbeat(() =>
    Promise.all(Array.from({ length: Math.min(PAGES_IN_PROGRESS, pageIds.length) }, lane)),
  );
  if (transient) throw transient.error;
  return results;
}

function isPermanent(error: unknown): boolean {
  return (error instanceof ApplicationFailure && error.nonRetryable === true) || isDataError(error);
}

/**
 * The store refused the page's own data (SQLSTATE class 22, "data exception": a NUL in text, an
 * invalid byte sequence, a value out of range; or 54000, a tsvector too long): the same page would
 * be refused on every retry, and the batch, retried for ever, held up its crawl's end. It is that
 * page's failure; an outage (a lost connection, a restart) still retries the batch.
 */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22[0-9A-Z]{3}|54000)$/.test(code);
}

export function createPageBatchActivities(deps: PageBatchDeps) {
  const { db } = deps;

  /** Claims the pages no other batch of the crawl owns; returns the ids this batch owns. */
  async function claim(input: ProcessPagesContentInput): Promise<Set<number>> {
    if (input.pageIds.length === 0) return new Set();
    await db.query(
      `INSERT INTO crawl_pages_processed (crawl_id, page_id, batch_id)
       SELECT $1, unnest($2::bigint[]), $3
       ON CONFLICT (crawl_id, page_id) DO NOTHING`,
      [input.crawlId, input.pageIds, input.batchId],
    );
    const owned = await db.query<{ page_id: string }>(
      `SELECT page_id::text AS page_id FROM crawl_pages_processed
        WHERE crawl_id = $1 AND page_id = ANY($2::bigint[]) AND batch_id = $3`,
      [input.crawlId, input.pageIds, input.batchId],
    );
    return new Set(owned.rows.map((row) => Number(row.page_id)));
  }

  return {
    async processPagesContent(input: ProcessPagesContentInput): Promise<ProcessPagesContentResult> {
      if (new Set(input.pageIds).size !== input.pageIds.length) {
        throw ApplicationFailure.nonRetryable(
          `batch ${input.batchId} lists a page twice: ${input.pageIds.join(', ')}`,
          'InvalidBatch',
        );
      }
      const owned = await claim(input);
      const mine = input.pageIds.filter((pageId) => owned.has(pageId));
      const results = new Map(
        (await eachPage(mine, (pageId) => deps.processPageContent({ pageId, crawlId: input.crawlId }))).map(
          (r) => [r.pageId, r],
        ),
      );
      return {
        pages: input.pageIds.map((pageId): PageContentOutcome => {
          const result = results.get(pageId);
          if (!result) return { pageId, claimed: false };
          if (result.value) return { pageId, claimed: true, ...result.value };
          return { pageId, claimed: true, error: result.error ?? 'failed' };
        }),
      };
    },

    async summarizePages(input: SummarizePagesInput): Promise<SummarizePagesResult> {
      const results = await eachPage(input.pageIds, (pageId) => deps.summarizePage({ pageId }));
      return {
        errors: results.flatMap((r) => (r.error === undefined ? [] : [{ pageId: r.pageId, error: r.error }])),
      };
    },
  };
}
