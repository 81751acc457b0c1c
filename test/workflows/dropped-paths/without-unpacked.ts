/**
 * The crawl workflow with the path before `crawl-quota-first-v1` dropped (that patch deprecated:
 * reports first, starts with quota, packed tasks whenever effects go out together); for
 * crawl-generations.test.ts.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import type { CrawlSpecInput } from '../../../domain/crawl-spec';
import type { CrawlState } from '../../../domain/crawl-state';
import { runCrawl } from '../../../workflows/crawl-workflow';

export function crawlWorkflow(input: CrawlSpecInput, carried?: CrawlState) {
  return runCrawl(input, carried, () => {
    const concurrentEffects = patched('crawl-concurrent-effects-v1');
    if (concurrentEffects) deprecatePatch('crawl-quota-first-v1');
    const finishInTurns = concurrentEffects && patched('crawl-finish-turns-v1');
    const finishWindow = finishInTurns && patched('crawl-finish-window-v1');
    const fairQuota = finishWindow && patched('crawl-fair-quota-v1');
    const openingBatch = fairQuota && patched('crawl-opening-batch-v1');
    const staggeredStarts = openingBatch && patched('crawl-start-stagger-v1');
    return {
      concurrentEffects,
      quotaFirst: concurrentEffects,
      finishInTurns,
      finishWindow,
      fairQuota,
      openingBatch,
      staggeredStarts,
      orphanCopies: staggeredStarts && patched('crawl-orphan-copies-v1'),
    };
  });
}
