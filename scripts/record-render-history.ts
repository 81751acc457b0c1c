/**
 * Records one origin workflow history that takes the rendering tier (plain fetches, renders after
 * them, and learnt straight-to-browser renders) as `test/fixtures/histories/origin-render.json`,
 * and adds it to the manifest, for `test/workflows/replay.test.ts`.
 *
 *   npx tsx scripts/record-render-history.ts
 *
 * Same rules as scripts/record-histories.ts: re-record only after an intentional, patched() change.
 * Needs Chromium (scripts/setup.sh installs it).
 */
import { originWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { serveSpaSite } from '../testbed/spa-site';
import {
  closedHistory,
  replaceInManifest,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-render';

const spa = await serveSpaSite({ itemCount: 4 });
await withRecordingStack([spa], async (stack) => {
  const summary = await runFixtureCrawl(stack, {
    crawlId: CRAWL_ID,
    seeds: [spa.server.url],
    sitemaps: false,
  });
  if (summary.status !== 'completed' || summary.pagesRendered !== spa.appRoutes.length) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify(summary)}`);
  }
  const workflowId = originWorkflowId(CRAWL_ID, spa.server.origin);
  const entry = { file: 'origin-render.json', workflowId, workflowType: WORKFLOW_TYPES.origin };
  replaceInManifest(writeHistory(entry, await closedHistory(stack, workflowId)));
});
