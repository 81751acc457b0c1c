/**
 * Records a crawl whose end indexes a rel=canonical copy left without its canonical page
 * (`patched('crawl-orphan-copies-v1')`: `releaseOrphanCopies`, then a page batch the crawl workflow
 * starts itself), for `test/workflows/replay.test.ts`:
 *
 *   npx tsx scripts/record-orphan-copies-history.ts
 *
 * - `crawl-orphan-copies.json`: the crawl workflow's history. The loopback site's page `/walrus`
 *   names `/walrus-gone` as its canonical URL, which answers 404.
 *
 * Kept apart from record-histories.ts so re-recording one never rewrites the other.
 */

import { crawlWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
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

const CRAWL_ID = 'history-fixture-orphan-copies';

const site = await serveSite(undefined);
routeHtml(
  site,
  '/',
  pageHtml('Allotment diary', ['/walrus'], 'Every bed of the allotment, what was sown and what came up.'),
);
routeHtml(
  site,
  '/walrus',
  pageHtml('Walrus kale', [], 'Walrus kale overwinters under fleece and crops again in March.').replace(
    '</title>',
    '</title><link rel="canonical" href="/walrus-gone">',
  ),
);
site.route('/walrus-gone', (_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('gone'));

await withRecordingStack([site], async (stack) => {
  const summary = await runFixtureCrawl(stack, { crawlId: CRAWL_ID, seeds: [site.url] });
  const workflowId = crawlWorkflowId(CRAWL_ID);
  const history = await closedHistory(stack, workflowId);
  const started = (history.events ?? []).some(
    (event) =>
      event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId?.includes('/orphan-copies/') ===
      true,
  );
  if (summary.status !== 'completed' || summary.pagesIndexed !== 2 || !started)
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify({ summary, started })}`);
  replaceInManifest(
    writeHistory(
      { file: 'crawl-orphan-copies.json', workflowId, workflowType: WORKFLOW_TYPES.crawl },
      history,
    ),
  );
});
