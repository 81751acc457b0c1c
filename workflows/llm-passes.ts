/**
 * The LLM summary and tag passes of one page, as page and page-batch workflows run them. Temporal owns
 * their retries and backoff; a pass that fails for good leaves the offline summary and tags in place
 * and does not fail the page.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';

const { llmSummarizePage, llmTagPage } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.llm,
  startToCloseTimeout: '3 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES, 'LlmRequestRejected', 'LlmNotConfigured'],
  },
});

export async function runLlmPasses(pageId: number): Promise<void> {
  for (const pass of [llmSummarizePage, llmTagPage]) {
    try {
      await pass({ pageId });
    } catch (error) {
      log.warn('LLM pass failed; the offline summary and tags stay', { pageId, error });
    }
  }
}
