/**
 * The origin's last step (`patched('site-templates-v1')`): pages processed before the origin's
 * site template was learnt, or with an older one, are cleaned again. The activity finds the pages
 * whose cleaning the template now changes and runs them through the same idempotent page path
 * (processPageContent: chunks keyed by hash keep their vectors); their new chunks are embedded and
 * the pages summarised again here. A recrawl of an unchanged site finds none.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { ACTIVITY_HEARTBEAT_TIMEOUT, NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';
import { runLlmPasses } from './llm-passes';

const retry = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  maximumAttempts: 20,
  nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES, 'EmbeddingModelMismatch', 'PageNotFound'],
};

const { recleanSiteTemplate } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.page,
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  retry,
});

const { embedPages, summarizePages } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.embed,
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  retry,
});

export interface TemplateRecleanResult {
  /** Pages cleaned again. */
  pages: number;
  /** Chunks embedded for them (chunks whose text did not change keep their vectors). */
  chunksEmbedded: number;
}

/**
 * Cleans the origin's pages again where its template changed what they lose; never fails the origin.
 * With `llm` (the crawl's llmSummaries) the re-cleaned pages get their LLM passes again too.
 */
export async function recleanOrigin(origin: string, llm = false): Promise<TemplateRecleanResult> {
  const result: TemplateRecleanResult = { pages: 0, chunksEmbedded: 0 };
  let afterPageId = 0;
  try {
    for (;;) {
      const batch = await recleanSiteTemplate({ origin, afterPageId });
      if (batch.pageIds.length > 0) {
        const embedded = await embedPages({ pageIds: batch.pageIds });
        for (const page of embedded.pages) result.chunksEmbedded += page.embedded;
        await summarizePages({ pageIds: batch.pageIds });
        if (llm) await Promise.all(batch.pageIds.map(runLlmPasses));
        result.pages += batch.pageIds.length;
      }
      if (batch.nextAfterPageId === undefined) break;
      afterPageId = batch.nextAfterPageId;
    }
  } catch (error) {
    // The pages keep the cleaning they had; the next crawl of the origin tries again.
    log.warn('site template re-clean failed', { origin, error });
  }
  return result;
}
