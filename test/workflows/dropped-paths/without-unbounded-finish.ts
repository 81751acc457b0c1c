/**
 * The crawl workflow with the path before `crawl-finish-window-v1` dropped (that patch deprecated:
 * finishing origins always bounded by FINISH_WINDOW); for crawl-generations.test.ts.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import type { CrawlSpecInput } from '../../../domain/crawl-spec';
import type { CrawlState } from '../../../domain/crawl-state';
import { runCrawl } from '../../../workflows/crawl-workflow';

export function crawlWorkflow(input: CrawlSpecInput, carried?: CrawlState) {
  return runCrawl(input, carried, () => {
    const concurrentEffects = patched('crawl-concurrent-effects-v1');
    const quotaFirst = concurrentEffects && patched('crawl-quota-first-v1');
    const finishInTurns = quotaFirst && patched('crawl-finish-turns-v1');
    if (finishInTurns) deprecatePatch('crawl-finish-window-v1');
    const fairQuota = finishInTurns && patched('crawl-fair-quota-v1');
    const openingBatch = fairQuota && patched('crawl-opening-batch-v1');
    const staggeredStarts = openingBatch && patched('crawl-start-stagger-v1');
    return {
      concurrentEffects,
      quotaFirst,
      finishInTurns,
      finishWindow: finishInTurns,
      fairQuota,
      openingBatch,
      staggeredStarts,
      orphanCopies: staggeredStarts && patched('crawl-orphan-copies-v1'),
    };
  });
}
