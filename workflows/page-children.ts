/**
 * The origin workflow's page children: stored pages are gathered into page batches (one
 * `pageBatchWorkflow` each, `patched('page-batches-v1')`) or, in runs recorded before batches, one
 * `pageWorkflow` per page. Children are started without being awaited, so the next fetch is
 * scheduled in the same workflow task; their outcomes are collected and counted by `drain`, before
 * the origin reports idle, finishes or continues as new.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { startChild } from '@temporalio/workflow';
import type { CrawlSpec } from '../domain/crawl-spec';
import { countPageOutcomes, type OriginStats, type PageOutcome } from '../domain/origin-stats';
import { addToBatch, batchDue, batchLimit, type OpenBatch } from '../domain/page-batch';
import {
  pageBatchWorkflowId,
  pageWorkflowId,
  TASK_QUEUES,
  WORKFLOW_TASK_TIMEOUT,
} from '../domain/temporal-names';
import { type PageBatchWorkflowResult, pageBatchWorkflow } from './page-batch-workflow';
import { pageWorkflow } from './page-workflow';

export interface PageChildren {
  /** Hands a stored page to its page workflow: into the open batch, or a workflow of its own. */
  add(pageId: number): void;
  /** Starts the open batch's workflow now, if a batch is open. */
  closeBatch(): void;
  /** Closes the open batch once it is old enough, or when a wait until `untilMs` would make it so. */
  closeBatchIfDue(untilMs?: number): void;
  /** Closes the open batch and waits for every page child; nothing is left open or uncounted. */
  drain(): Promise<void>;
}

export function pageChildren(run: {
  spec: CrawlSpec;
  origin: string;
  /** The origin's state: batch numbers are carried in it, outcomes counted in its stats. */
  state: { pageBatches?: number; stats: OriginStats };
  /** `patched('page-batches-v1')`: false for runs recorded before batches. */
  batched: boolean;
  /** The first batch closes at this many pages (PAGE_BATCH_OPENING_PAGES for the crawl's first origin). */
  openingBatchPages?: number;
  /** A batch closes this long after its first page (PAGE_BATCH_MS; shorter in runs recorded before). */
  batchAgeMs: number;
}): PageChildren {
  const { spec, origin, state, batched, openingBatchPages, batchAgeMs } = run;
  const children: Array<Promise<PageOutcome | PageOutcome[]>> = [];
  let openBatch: OpenBatch | undefined;

  /**
   * Starts the page's workflow without waiting for it, so the next fetch is scheduled in the same
   * workflow task; its outcome is collected before the origin reports idle or continues as new.
   */
  function startPage(pageId: number): void {
    const workflowId = pageWorkflowId(spec.crawlId, pageId);
    children.push(
      startChild(pageWorkflow, {
        workflowId,
        taskQueue: TASK_QUEUES.crawl,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        args: [{ crawlId: spec.crawlId, pageId, ...(spec.llmSummaries ? { llm: true } : {}) }],
      })
        .then((child) => child.result())
        .then(
          (result): PageOutcome => ({
            indexed: result.indexed,
            ...(result.chunksEmbedded ? { chunksEmbedded: result.chunksEmbedded } : {}),
            ...(result.duplicate ? { duplicate: true } : {}),
          }),
          (error: unknown): PageOutcome =>
            // The same page reached twice in one crawl (a redirect alias): its workflow already ran.
            error instanceof WorkflowExecutionAlreadyStartedError
              ? { indexed: false }
              : { indexed: false, error: `page workflow ${workflowId} failed: ${(error as Error).message}` },
        ),
    );
  }

  /**
   * Starts the open batch's workflow without waiting for it, as startPage does for one page. The
   * batch's claim (not the open list) keeps a page reached through two URLs from being processed
   * twice.
   */
  function closeBatch(): void {
    if (!openBatch || openBatch.pageIds.length === 0) return;
    const { pageIds } = openBatch;
    openBatch = undefined;
    const seq = (state.pageBatches ?? 0) + 1;
    state.pageBatches = seq;
    const workflowId = pageBatchWorkflowId(spec.crawlId, origin, seq);
    children.push(
      startChild(pageBatchWorkflow, {
        workflowId,
        taskQueue: TASK_QUEUES.crawl,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        args: [{ crawlId: spec.crawlId, pageIds, ...(spec.llmSummaries ? { llm: true } : {}) }],
      })
        .then((child) => child.result())
        .then(
          (result): PageOutcome[] => batchOutcomes(result),
          (error: unknown): PageOutcome[] =>
            // Started before (a reset origin run): that run's batch claimed and processes its pages.
            error instanceof WorkflowExecutionAlreadyStartedError
              ? pageIds.map(() => ({ indexed: false }))
              : pageIds.map(() => ({
                  indexed: false,
                  error: `page batch ${workflowId} failed: ${(error as Error).message}`,
                })),
        ),
    );
  }

  return {
    add(pageId) {
      if (!batched) return startPage(pageId);
      const limit = batchLimit(state.pageBatches ?? 0, openingBatchPages);
      const added = addToBatch(openBatch, pageId, Date.now(), limit);
      openBatch = added.batch;
      if (added.full) closeBatch();
    },
    closeBatch,
    closeBatchIfDue(untilMs = Date.now()) {
      if (batchDue(openBatch, untilMs, batchAgeMs)) closeBatch();
    },
    async drain() {
      closeBatch();
      while (children.length > 0) {
        const settled = await children.shift();
        countPageOutcomes(state.stats, Array.isArray(settled) ? settled : settled ? [settled] : []);
      }
    },
  };
}

/** What a page batch's pages came to, as the origin's (or the crawl's) stats count them. */
export function batchOutcomes(result: PageBatchWorkflowResult): PageOutcome[] {
  return result.pages.map((page) => ({
    indexed: page.indexed,
    ...(page.chunksEmbedded ? { chunksEmbedded: page.chunksEmbedded } : {}),
    ...(page.duplicate ? { duplicate: true } : {}),
    ...(page.error ? { error: page.error } : {}),
  }));
}
