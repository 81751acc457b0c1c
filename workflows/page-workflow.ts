/**
 * One page's processing after its fetch: extract → normalise → chunk (one CPU activity on the page
 * queue, writing Markdown, metadata and chunks to Postgres), then embed (the embed queue, writing
 * vectors back and marking the page indexed), then summarise and tag (the embed queue: offline, with
 * the same model). Only ids and counts pass through history.
 */
import { patched, proxyActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { ACTIVITY_HEARTBEAT_TIMEOUT, NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';
import { runLlmPasses } from './llm-passes';

const retry = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  maximumAttempts: 60,
  nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES, 'EmbeddingModelMismatch', 'PageNotFound'],
};

const { recordPage, processPageContent } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.page,
  // Extraction is bounded (capped input, bounded DOM depth); two minutes covers a 10 MB page.
  startToCloseTimeout: '2 minutes',
  retry,
});

const { summarizePage } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.embed,
  // A few hundred short texts through the model: seconds; generous for a loaded machine. The
  // activity heartbeats, so a worker killed mid-summary costs 30 s, not the whole timeout.
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry,
});

const { embedPage } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.embed,
  // A page of a thousand chunks embeds in under a minute on two cores; heartbeats catch a lost worker sooner.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  retry,
});

export interface PageWorkflowInput {
  crawlId: string;
  pageId: number;
  /** Also run the LLM summary and tag passes (the crawl's `llmSummaries`). */
  llm?: boolean;
}

export interface PageWorkflowResult {
  pageId: number;
  /** The page has chunks with vectors: it is searchable. */
  indexed: boolean;
  chunks?: number;
  /** Chunks this run embedded. */
  chunksEmbedded?: number;
  /** A near duplicate of a live page: not indexed. */
  duplicate?: boolean;
}

export async function pageWorkflow(input: PageWorkflowInput): Promise<PageWorkflowResult> {
  if (!patched('content-pipeline-v1')) {
    const { indexed } = await recordPage({ crawlId: input.crawlId, pageId: input.pageId });
    return { pageId: input.pageId, indexed };
  }
  const content = await processPageContent({ pageId: input.pageId });
  // A page with no content (empty, or nothing but chrome) is stored but not indexed.
  if (content.chunks === 0)
    return {
      pageId: input.pageId,
      indexed: false,
      chunks: 0,
      ...(content.duplicate ? { duplicate: true } : {}),
    };
  // Unchanged since it was indexed, every chunk with a vector from the current model: a recrawl
  // pays no embed activity for it. Runs recorded before this embedded regardless.
  if (
    content.skipped &&
    content.toEmbed === 0 &&
    content.indexed === true &&
    patched('skip-unchanged-embed-v1')
  ) {
    // A recrawl sends an unchanged page here only when it lacks a summary of this extraction (it
    // was indexed before summaries existed): the summary is all it needs.
    if (patched('backfill-summaries-v1')) await summarizePage({ pageId: input.pageId });
    return { pageId: input.pageId, indexed: true, chunks: content.chunks };
  }
  const embedded = await embedPage({ pageId: input.pageId });
  // Summary and tags from the page's vectors (offline; skipped when this extraction has them).
  if (patched('summaries-tags-v1')) await summarizePage({ pageId: input.pageId });
  if (input.llm && patched('llm-summaries-v1')) {
    await runLlmPasses(input.pageId);
  }
  return {
    pageId: input.pageId,
    indexed: true,
    chunks: content.chunks,
    chunksEmbedded: embedded?.embedded ?? 0,
  };
}
