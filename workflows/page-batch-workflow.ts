/**
 * A batch of one origin's pages after their fetch (`patched('page-batches-v1')` in the origin): the
 * steps of pageWorkflow — claim and extract → chunk, embed, summarise, the optional LLM passes —
 * each one activity for the whole batch, so a page costs a fraction of the events and workflow
 * tasks a child workflow per page did. Only ids, flags and counts pass through history.
 *
 * Per page, as before: a page that fails for good is that page's error, never the batch's. A batch
 * step that fails for good (say one page makes it throw a retryable error every time) is run again
 * page by page, so only the page at fault fails.
 */
import { log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ActivityApi, PageContentOutcome } from '../activities/types';
import { ACTIVITY_HEARTBEAT_TIMEOUT, NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';
import { runLlmPasses } from './llm-passes';

const retry = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  maximumAttempts: 60,
  nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES, 'EmbeddingModelMismatch', 'PageNotFound'],
};
/** A whole batch is retried a few times only, then page by page with the full policy above. */
const batchRetry = {
  ...retry,
  maximumAttempts: 5,
  nonRetryableErrorTypes: [...retry.nonRetryableErrorTypes, 'InvalidBatch'],
};

const pageQueue = (policy: typeof retry) =>
  proxyActivities<ActivityApi>({
    taskQueue: TASK_QUEUES.page,
    // Extraction of one page is bounded (two minutes covers a 10 MB page); a batch's pages run side
    // by side in the extraction pool, off the event loop that beats every 5 s. The heartbeat timeout
    // is what a lost worker costs: at a minute, a fleet whose page worker was killed every half
    // minute (the fault-injection test) kept batches waiting for minutes.
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
    retry: policy,
  });

const embedQueue = (policy: typeof retry) =>
  proxyActivities<ActivityApi>({
    taskQueue: TASK_QUEUES.embed,
    // A page of a thousand chunks embeds in under a minute on two cores; a batch in a few. The model
    // runs off the event loop, which beats every 5 s (see the page queue for the timeout).
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
    retry: policy,
  });

// proxyActivities returns a proxy, whose members are read by name (spreading it copies nothing).
const { processPagesContent } = pageQueue(batchRetry);
const { embedPages, summarizePages } = embedQueue(batchRetry);
const { processPagesContent: processPageAlone } = pageQueue(retry);
const { embedPage, summarizePage } = embedQueue(retry);

export interface PageBatchWorkflowInput {
  crawlId: string;
  /** One origin's pages, no repeats. */
  pageIds: number[];
  /** Also run the LLM summary and tag passes (the crawl's `llmSummaries`). */
  llm?: boolean;
}

/** What one page of the batch came to: the fields of a PageWorkflowResult, plus an error. */
export interface PageBatchOutcome {
  pageId: number;
  indexed: boolean;
  chunks?: number;
  chunksEmbedded?: number;
  duplicate?: boolean;
  /** The page failed for good; the other pages of the batch are not affected. */
  error?: string;
}

export interface PageBatchWorkflowResult {
  pages: PageBatchOutcome[];
}

export async function pageBatchWorkflow(input: PageBatchWorkflowInput): Promise<PageBatchWorkflowResult> {
  const batchId = workflowInfo().workflowId;
  const outcomes = new Map<number, PageBatchOutcome>();
  const fail = (pageId: number, error: string) => outcomes.set(pageId, { pageId, indexed: false, error });

  const contents = await processContents(input.crawlId, batchId, input.pageIds);
  const toEmbed: number[] = [];
  const toSummarize: number[] = [];
  for (const content of contents) {
    const { pageId } = content;
    // Claimed by another batch: the page was reached through another URL too, and runs there.
    if (!content.claimed) outcomes.set(pageId, { pageId, indexed: false });
    else if ('error' in content) fail(pageId, `page ${pageId}: ${content.error}`);
    // A page with no content (empty, or nothing but chrome) is stored but not indexed.
    else if (content.chunks === 0)
      outcomes.set(pageId, {
        pageId,
        indexed: false,
        chunks: 0,
        ...(content.duplicate ? { duplicate: true } : {}),
      });
    // Unchanged since it was indexed, every chunk with a vector from the current model: it needs
    // its summary only (a recrawl sends it here when it was indexed before summaries existed).
    else if (content.skipped && content.toEmbed === 0 && content.indexed === true) {
      outcomes.set(pageId, { pageId, indexed: true, chunks: content.chunks });
      toSummarize.push(pageId);
    } else {
      outcomes.set(pageId, { pageId, indexed: true, chunks: content.chunks, chunksEmbedded: 0 });
      toEmbed.push(pageId);
    }
  }

  for (const result of await embedAll(toEmbed)) {
    const outcome = outcomes.get(result.pageId);
    if (result.error !== undefined) fail(result.pageId, `page ${result.pageId}: ${result.error}`);
    else if (outcome) {
      outcome.chunksEmbedded = result.embedded;
      toSummarize.push(result.pageId);
    }
  }

  // Summary and tags from the pages' vectors (offline; skipped where this extraction has them).
  for (const { pageId, error } of await summarizeAll(toSummarize)) fail(pageId, `page ${pageId}: ${error}`);

  if (input.llm) {
    const llmPages = toEmbed.filter((pageId) => outcomes.get(pageId)?.error === undefined);
    await Promise.all(llmPages.map(runLlmPasses));
  }
  return { pages: input.pageIds.map((pageId) => outcomes.get(pageId) ?? { pageId, indexed: false }) };
}

/** The batch's claim and extraction; page by page if the batch step fails for good. */
async function processContents(
  crawlId: string,
  batchId: string,
  pageIds: number[],
): Promise<PageContentOutcome[]> {
  try {
    return (await processPagesContent({ crawlId, batchId, pageIds })).pages;
  } catch (error) {
    log.warn('batch extraction failed; running its pages one by one', { batchId, error });
    return Promise.all(
      pageIds.map(async (pageId): Promise<PageContentOutcome> => {
        try {
          const [only] = (await processPageAlone({ crawlId, batchId, pageIds: [pageId] })).pages;
          return only ?? { pageId, claimed: true, error: 'no result' };
        } catch (pageError) {
          return { pageId, claimed: true, error: failureMessage(pageError) };
        }
      }),
    );
  }
}

async function embedAll(
  pageIds: number[],
): Promise<Array<{ pageId: number; embedded: number; error?: string }>> {
  if (pageIds.length === 0) return [];
  try {
    return (await embedPages({ pageIds })).pages;
  } catch (error) {
    log.warn('batch embedding failed; embedding its pages one by one', { pageIds, error });
    return Promise.all(
      pageIds.map(async (pageId) => {
        try {
          return { pageId, embedded: (await embedPage({ pageId })).embedded };
        } catch (pageError) {
          return { pageId, embedded: 0, error: failureMessage(pageError) };
        }
      }),
    );
  }
}

async function summarizeAll(pageIds: number[]): Promise<Array<{ pageId: number; error: string }>> {
  if (pageIds.length === 0) return [];
  try {
    return (await summarizePages({ pageIds })).errors;
  } catch (error) {
    log.warn('batch summaries failed; summarising its pages one by one', { pageIds, error });
    const results = await Promise.all(
      pageIds.map(async (pageId) => {
        try {
          await summarizePage({ pageId });
          return [];
        } catch (pageError) {
          return [{ pageId, error: failureMessage(pageError) }];
        }
      }),
    );
    return results.flat();
  }
}

/** An activity failure's own message (the cause), not the wrapper's "Activity task failed". */
function failureMessage(error: unknown): string {
  const cause = (error as Error).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}
