/**
 * The crawl's last indexing (`crawl-orphan-copies-v1`): the rel=canonical copies whose canonical
 * page the crawl never made searchable are released by `releaseOrphanCopies` and indexed here, in
 * page batches the crawl starts and waits for, before its summary is taken; their outcomes count in
 * their origins' stats like any page's. A cancelled crawl starts no new work.
 */
import { executeChild, proxyActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import type { CrawlSpec } from '../domain/crawl-spec';
import type { CrawlState } from '../domain/crawl-state';
import { countPageOutcomes, type PageOutcome } from '../domain/origin-stats';
import { PAGE_BATCH_PAGES } from '../domain/page-batch';
import { orphanBatchWorkflowId, TASK_QUEUES, WORKFLOW_TASK_TIMEOUT } from '../domain/temporal-names';
import { pageBatchWorkflow } from './page-batch-workflow';
import { batchOutcomes } from './page-children';

// One UPDATE of at most MAX_RELEASED rows; a killed worker holds it a minute at most, like the
// crawl's other activities (test/integration/fault-injection.test.ts checks every one).
const { releaseOrphanCopies } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.crawl,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function indexOrphanCopies(spec: CrawlSpec, state: CrawlState): Promise<void> {
  if (state.cancelled) return;
  const { released } = await releaseOrphanCopies({ crawlId: spec.crawlId });
  // Origins side by side, each origin's batches one after another, as its own batches run.
  await Promise.all(
    released.map(async ({ origin, pageIds }) => {
      const outcomes: PageOutcome[] = [];
      for (let at = 0, seq = 1; at < pageIds.length; at += PAGE_BATCH_PAGES, seq++) {
        const batch = pageIds.slice(at, at + PAGE_BATCH_PAGES);
        const workflowId = orphanBatchWorkflowId(spec.crawlId, origin, seq);
        const result = await executeChild(pageBatchWorkflow, {
          workflowId,
          taskQueue: TASK_QUEUES.crawl,
          workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
          args: [{ crawlId: spec.crawlId, pageIds: batch, ...(spec.llmSummaries ? { llm: true } : {}) }],
        }).then(batchOutcomes, (error: unknown): PageOutcome[] =>
          batch.map(() => ({
            indexed: false,
            error: `page batch ${workflowId} failed: ${(error as Error).message}`,
          })),
        );
        outcomes.push(...result);
      }
      const stats = state.origins[origin]?.stats;
      if (stats) countPageOutcomes(stats, outcomes);
    }),
  );
}
