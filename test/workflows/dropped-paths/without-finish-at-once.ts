/**
 * The crawl workflow with the path before `crawl-finish-turns-v1` dropped (that patch deprecated:
 * origins always finished in turns once quota comes first); for crawl-generations.test.ts.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import type { CrawlSpecInput } from '../../../domain/crawl-spec';
import type { CrawlState } from '../../../domain/crawl-state';
import { runCrawl } from '../../../workflows/crawl-workflow';

export function crawlWorkflow(input: CrawlSpecInput, carried?: CrawlState) {
  return runCrawl(input, carried, () => {
    const concurrentEffects = patched('crawl-concurrent-effects-v1');
    const quotaFirst = concurrentEffects && patched('crawl-quota-first-v1');
    if (quotaFirst) deprecatePatch('crawl-finish-turns-v1');
    const finishWindow = quotaFirst && patched('crawl-finish-window-v1');
    const fairQuota = finishWindow && patched('crawl-fair-quota-v1');
    const openingBatch = fairQuota && patched('crawl-opening-batch-v1');
    const staggeredStarts = openingBatch && patched('crawl-start-stagger-v1');
    return {
      concurrentEffects,
      quotaFirst,
      finishInTurns: quotaFirst,
      finishWindow,
      fairQuota,
      openingBatch,
      staggeredStarts,
      orphanCopies: staggeredStarts && patched('crawl-orphan-copies-v1'),
    };
  });
}
