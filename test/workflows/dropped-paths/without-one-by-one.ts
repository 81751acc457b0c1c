/**
 * The crawl workflow with its oldest path dropped (`crawl-concurrent-effects-v1` deprecated: commands
 * always go out together), as a removal would leave it; for crawl-generations.test.ts.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import type { CrawlSpecInput } from '../../../domain/crawl-spec';
import type { CrawlState } from '../../../domain/crawl-state';
import { runCrawl } from '../../../workflows/crawl-workflow';

export function crawlWorkflow(input: CrawlSpecInput, carried?: CrawlState) {
  return runCrawl(input, carried, () => {
    deprecatePatch('crawl-concurrent-effects-v1');
    const quotaFirst = patched('crawl-quota-first-v1');
    const finishInTurns = quotaFirst && patched('crawl-finish-turns-v1');
    const finishWindow = finishInTurns && patched('crawl-finish-window-v1');
    const fairQuota = finishWindow && patched('crawl-fair-quota-v1');
    const openingBatch = fairQuota && patched('crawl-opening-batch-v1');
    const staggeredStarts = openingBatch && patched('crawl-start-stagger-v1');
    return {
      concurrentEffects: true,
      quotaFirst,
      finishInTurns,
      finishWindow,
      fairQuota,
      openingBatch,
      staggeredStarts,
      orphanCopies: staggeredStarts && patched('crawl-orphan-copies-v1'),
    };
  });
}
