/**
 * Records `test/fixtures/histories/origin-spill.json`: an origin workflow whose frontier spills
 * (`patched('frontier-spill-v1')`), for `test/workflows/replay.test.ts`.
 *
 *   npx tsx scripts/record-spill-history.ts
 *
 * One loopback origin whose root links to 14 sections (each with one leaf) is crawled with
 * `frontierMaxUrls: 10`, so its first fetch spills and `nextSpilledUrls` takes URLs back; a second
 * origin links to every leaf, so a batch arriving by signal overfills the frontier and `spillUrls`
 * parks it. Kept apart from record-histories.ts so re-recording one never rewrites the other.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crawlWorkflowId, originWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../domain/temporal-names';
import { pageHtml } from '../test/helpers/generated-site';
import { historyToJSON } from '../test/helpers/history-json';
import { type SiteServer, serveSite } from '../test/helpers/site-server';
import { startTestStack } from '../test/helpers/stack';
import type { CrawlSummary } from '../workflows/messages';

const OUT_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'test',
  'fixtures',
  'histories',
);
const CRAWL_ID = 'history-fixture-spill';
const FILE = 'origin-spill.json';
const SECTIONS = 14;

function serve(site: SiteServer, pathname: string, links: string[]): void {
  const html = pageHtml(`Page ${pathname}`, links, 'Fixture page for recording a spilling frontier.');
  site.route(pathname, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
}

const big = await serveSite(undefined);
const feeder = await serveSite(undefined);
const sections = Array.from({ length: SECTIONS }, (_, i) => `/s-${i}`);
serve(big, '/', sections);
for (const section of sections) {
  serve(big, section, [`${section}/leaf`, '/']);
  serve(big, `${section}/leaf`, [section]);
}
serve(
  feeder,
  '/',
  sections.map((section) => `${big.origin}${section}/leaf`),
);
const stack = await startTestStack();
try {
  const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(CRAWL_ID),
    args: [
      {
        crawlId: CRAWL_ID,
        seeds: [big.url, feeder.url],
        scope: 'same-site',
        delayMs: 50,
        allowHosts: ['127.0.0.1'],
        frontierMaxUrls: 10,
      },
    ],
  });
  const workflowId = originWorkflowId(CRAWL_ID, big.origin);
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const activities = new Set(
    (history.events ?? []).map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name),
  );
  if (
    summary.status !== 'completed' ||
    summary.pagesFetched !== 2 + 2 * SECTIONS ||
    !activities.has('nextSpilledUrls')
  ) {
    throw new Error(
      `unexpected outcome, not recording: ${JSON.stringify({ summary, activities: [...activities] })}`,
    );
  }
  writeFileSync(path.join(OUT_DIR, FILE), `${historyToJSON(history)}\n`);
  const manifestFile = path.join(OUT_DIR, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Array<{ file: string }>;
  const entry = { file: FILE, workflowId, workflowType: WORKFLOW_TYPES.origin };
  writeFileSync(
    manifestFile,
    `${JSON.stringify([...manifest.filter((e) => e.file !== FILE), entry], null, 2)}\n`,
  );
  console.info(
    `wrote ${FILE}: ${history.events?.length ?? 0} events (${workflowId}); spillUrls ${activities.has('spillUrls') ? 'ran' : 'did not run'}`,
  );
} finally {
  await stack.close();
  await big.close();
  await feeder.close();
}
