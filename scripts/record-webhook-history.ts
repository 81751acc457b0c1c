/**
 * Records a crawl that sends signed webhooks (`notify`, `patched('webhooks-v1')`) and its webhooks
 * workflow, for `test/workflows/replay.test.ts`:
 *
 *   npx tsx scripts/record-webhook-history.ts
 *
 * - `crawl-webhooks.json`: the crawl workflow, with the started and completed webhooks children;
 * - `webhooks-completed.json`: the completed moment's workflow (plan the page-change batches, wait
 *   for the receiver's crawl.started, deliver each batch, then crawl.completed) to a receiver on
 *   127.0.0.1 that accepts everything.
 *
 * The `.v1` copies of both were recorded before `webhooks-order-v1`; keep them when re-recording.
 *
 * Kept apart from record-histories.ts so re-recording one never rewrites the other.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crawlWorkflowId, WORKFLOW_TYPES, webhooksWorkflowId } from '../domain/temporal-names';
import { WEBHOOK_SECRET_ENV } from '../domain/webhook-events';
import { pageHtml } from '../testbed/generated-site';
import { serveSite } from '../testbed/site-server';
import {
  closedHistory,
  replaceInManifest,
  routeHtml,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-webhooks';

process.env[WEBHOOK_SECRET_ENV] ??= 'history-fixture-secret';
const site = await serveSite(undefined);
routeHtml(site, '/', pageHtml('Index', ['/a.html', '/b.html'], 'Fixture page for recording webhooks.'));
routeHtml(site, '/a.html', pageHtml('A', ['/'], 'Page a of the webhook fixture.'));
routeHtml(site, '/b.html', pageHtml('B', ['/'], 'Page b of the webhook fixture.'));
const received: string[] = [];
const receiver = http.createServer((req, res) => {
  received.push(String(req.headers['gleaner-delivery-id']));
  req.resume().on('end', () => res.writeHead(204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const { port } = receiver.address() as AddressInfo;
const closeReceiver = {
  close: () => new Promise<void>((resolve) => receiver.close(() => resolve())),
};

await withRecordingStack([site, closeReceiver], async (stack) => {
  const summary = await runFixtureCrawl(stack, {
    crawlId: CRAWL_ID,
    seeds: [site.url],
    sitemaps: false,
    notify: [`http://127.0.0.1:${port}/hook`],
  });
  const crawlId = crawlWorkflowId(CRAWL_ID);
  const crawl = await closedHistory(stack, crawlId);
  const completedId = webhooksWorkflowId(CRAWL_ID, 'completed');
  const completed = await closedHistory(stack, completedId);
  if (summary.status !== 'completed' || summary.pagesFetched !== 3 || received.length !== 3) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify({ summary, received })}`);
  }
  replaceInManifest(
    writeHistory(
      { file: 'crawl-webhooks.json', workflowId: crawlId, workflowType: WORKFLOW_TYPES.crawl },
      crawl,
    ),
  );
  replaceInManifest(
    writeHistory(
      { file: 'webhooks-completed.json', workflowId: completedId, workflowType: WORKFLOW_TYPES.webhooks },
      completed,
    ),
  );
});
