/**
 * Records the two runs of an origin workflow that re-cleaned its pages and continued as new while
 * idle (`patched('idle-reclean-v1')`, `patched('idle-compaction-v1')`), for
 * `test/workflows/replay.test.ts`:
 *
 *   npx tsx scripts/record-idle-history.ts
 *
 * - `origin-idle-start.json`: the run that drained the origin (past IDLE_COMPACTION_MIN_EVENTS),
 *   reported it idle, re-cleaned and continued as new;
 * - `origin-idle.json`: the run that began idle, was woken by a link another origin found late,
 *   re-cleaned once idle again, and finished without a re-clean of its own.
 *
 * Origin A serves a root linking to 20 pages; origin B a root linking to /hold, answered only once A
 * has continued as new, which links to a page of A. Kept apart from record-histories.ts so
 * re-recording one never rewrites the other.
 */
import type { temporal } from '@temporalio/proto';
import { originWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { pageHtml } from '../testbed/generated-site';
import { serveSite } from '../testbed/site-server';
import {
  replaceInManifest,
  routeHtml,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-idle';
const LEAVES = 20;

const a = await serveSite(undefined);
const b = await serveSite(undefined);
const leaves = Array.from({ length: LEAVES }, (_, i) => `/p${i}`);
routeHtml(a, '/', pageHtml('Root', leaves, 'Fixture page for recording an idle origin.'));
for (const leaf of [...leaves, '/late']) routeHtml(a, leaf, pageHtml(`Page ${leaf}`, [], 'A leaf.'));
routeHtml(b, '/', pageHtml('Other', ['/hold'], 'Another origin.'));

await withRecordingStack([a, b], async (stack) => {
  const workflowId = originWorkflowId(CRAWL_ID, a.origin);
  const runIds = async () => {
    const ids: string[] = [];
    for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      ids.push(run.runId);
    return ids;
  };
  b.route('/hold', (_req, res) => {
    void (async () => {
      for (let waited = 0; waited < 30_000 && (await runIds()).length < 2; waited += 250)
        await new Promise((resolve) => setTimeout(resolve, 250));
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(pageHtml('Hold', [`${a.origin}/late`], 'Answered once the other origin waits idle.'));
    })();
  });
  const summary = await runFixtureCrawl(stack, { crawlId: CRAWL_ID, seeds: [a.url, b.url] });
  const runs: temporal.api.history.v1.IHistory[] = [];
  for (const runId of await runIds())
    runs.push(await stack.client.workflow.getHandle(workflowId, runId).fetchHistory());
  // The run that continued as new, and the one that began idle.
  const continued = (h: temporal.api.history.v1.IHistory) =>
    Boolean(h.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes);
  const start = runs.find(continued);
  const waited = runs.find((h) => !continued(h));
  if (
    summary.status !== 'completed' ||
    summary.pagesFetched !== LEAVES + 2 + 2 ||
    runs.length !== 2 ||
    !start ||
    !waited
  ) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify({ summary, runs: runs.length })}`);
  }
  for (const [file, history] of [
    ['origin-idle-start.json', start],
    ['origin-idle.json', waited],
  ] as const)
    replaceInManifest(writeHistory({ file, workflowId, workflowType: WORKFLOW_TYPES.origin }, history));
});
