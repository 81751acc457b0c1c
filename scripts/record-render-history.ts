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
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crawlWorkflowId, originWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../domain/temporal-names';
import { historyToJSON } from '../test/helpers/history-json';
import { serveSpaSite } from '../test/helpers/spa-site';
import { startTestStack } from '../test/helpers/stack';
import type { CrawlSummary } from '../workflows/messages';

const OUT_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'test',
  'fixtures',
  'histories',
);
const CRAWL_ID = 'history-fixture-render';
const FILE = 'origin-render.json';

const spa = await serveSpaSite({ itemCount: 4 });
const stack = await startTestStack();
try {
  const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(CRAWL_ID),
    args: [
      { crawlId: CRAWL_ID, seeds: [spa.server.url], delayMs: 50, allowHosts: ['127.0.0.1'], sitemaps: false },
    ],
  });
  if (summary.status !== 'completed' || summary.pagesRendered !== spa.appRoutes.length) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify(summary)}`);
  }
  const workflowId = originWorkflowId(CRAWL_ID, spa.server.origin);
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  writeFileSync(path.join(OUT_DIR, FILE), `${historyToJSON(history)}\n`);
  const manifestFile = path.join(OUT_DIR, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Array<{ file: string }>;
  const entry = { file: FILE, workflowId, workflowType: WORKFLOW_TYPES.origin };
  writeFileSync(
    manifestFile,
    `${JSON.stringify([...manifest.filter((e) => e.file !== FILE), entry], null, 2)}\n`,
  );
  console.info(`wrote ${FILE}: ${history.events?.length ?? 0} events (${workflowId})`);
} finally {
  await stack.close();
  await spa.close();
}
