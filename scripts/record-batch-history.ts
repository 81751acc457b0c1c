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
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  crawlWorkflowId,
  originWorkflowId,
  pageBatchWorkflowId,
  TASK_QUEUES,
  WORKFLOW_TYPES,
} from '../domain/temporal-names';
import { addGeneratedPages } from '../test/helpers/generated-site';
import { historyToJSON } from '../test/helpers/history-json';
import { serveSite } from '../test/helpers/site-server';
import { startTestStack } from '../test/helpers/stack';
import type { CrawlSummary } from '../workflows/messages';

const OUT_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'test',
  'fixtures',
  'histories',
);
const CRAWL_ID = 'history-fixture-batches';
const PAGES = 20;

const site = await serveSite(undefined);
addGeneratedPages(site, PAGES);
const stack = await startTestStack();
try {
  const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(CRAWL_ID),
    args: [{ crawlId: CRAWL_ID, seeds: [site.url], delayMs: 50, allowHosts: ['127.0.0.1'] }],
  });
  if (summary.status !== 'completed' || summary.pagesFetched !== PAGES || summary.pagesIndexed !== PAGES) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify(summary)}`);
  }
  const recordings = [
    {
      file: 'origin-batches.json',
      workflowId: originWorkflowId(CRAWL_ID, site.origin),
      type: WORKFLOW_TYPES.origin,
    },
    {
      file: 'page-batch.json',
      workflowId: pageBatchWorkflowId(CRAWL_ID, site.origin, 1),
      type: WORKFLOW_TYPES.pageBatch,
    },
  ];
  const manifestFile = path.join(OUT_DIR, 'manifest.json');
  let manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Array<{
    file: string;
    workflowId: string;
    workflowType: string;
  }>;
  for (const { file, workflowId, type } of recordings) {
    const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(path.join(OUT_DIR, file), `${historyToJSON(history)}\n`);
    manifest = [...manifest.filter((e) => e.file !== file), { file, workflowId, workflowType: type }];
    console.info(`wrote ${file}: ${history.events?.length ?? 0} events (${workflowId})`);
  }
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
} finally {
  await stack.close();
  await site.close();
}
