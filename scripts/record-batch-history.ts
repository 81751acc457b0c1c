/**
 * Records `test/fixtures/histories/origin-batches.json` and `page-batch.json`: an origin workflow
 * that hands its pages to page batch workflows (`patched('page-batches-v1')`) and the first of those
 * batches, for `test/workflows/replay.test.ts`.
 *
 *   npx tsx scripts/record-batch-history.ts
 *
 * One loopback origin of 20 generated pages is crawled with `delayMs: 50`, so its pages fill a
 * batch of 16 and the rest close a second by size, age or the origin going idle. Kept apart from
 * record-histories.ts so re-recording one never rewrites the other.
 */
import { originWorkflowId, pageBatchWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { addGeneratedPages } from '../testbed/generated-site';
import { serveSite } from '../testbed/site-server';
import {
  closedHistory,
  replaceInManifest,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-batches';
const PAGES = 20;

const site = await serveSite(undefined);
addGeneratedPages(site, PAGES);
await withRecordingStack([site], async (stack) => {
  const summary = await runFixtureCrawl(stack, { crawlId: CRAWL_ID, seeds: [site.url] });
  if (summary.status !== 'completed' || summary.pagesFetched !== PAGES || summary.pagesIndexed !== PAGES) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify(summary)}`);
  }
  const recordings = [
    {
      file: 'origin-batches.json',
      workflowId: originWorkflowId(CRAWL_ID, site.origin),
      workflowType: WORKFLOW_TYPES.origin,
    },
    {
      file: 'page-batch.json',
      workflowId: pageBatchWorkflowId(CRAWL_ID, site.origin, 1),
      workflowType: WORKFLOW_TYPES.pageBatch,
    },
  ];
  for (const entry of recordings)
    replaceInManifest(writeHistory(entry, await closedHistory(stack, entry.workflowId)));
});
