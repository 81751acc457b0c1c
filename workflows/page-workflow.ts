/**
 * One page's processing after its fetch. Today it records the page as processed; the content
 * pipeline adds extract → chunk → embed → upsert here, each an activity on the queue that
 * suits its cost.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';

const { recordPage } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.page,
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    maximumAttempts: 60,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

export interface PageWorkflowInput {
  crawlId: string;
  pageId: number;
}

export interface PageWorkflowResult {
  pageId: number;
  indexed: boolean;
}

export async function pageWorkflow(input: PageWorkflowInput): Promise<PageWorkflowResult> {
  const { indexed } = await recordPage({ crawlId: input.crawlId, pageId: input.pageId });
  return { pageId: input.pageId, indexed };
}
