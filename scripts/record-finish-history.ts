/**
 * Records two runs of one crawl workflow whose finish phase continues as new
 * (`patched('crawl-finish-turns-v1')`, and since `crawl-finish-window-v1` with at most FINISH_WINDOW
 * origins finishing at once), for `test/workflows/replay.test.ts`:
 *
 *   npx tsx scripts/record-finish-history.ts
 *
 * - `crawl-finish-window-start.json`: the run in which every origin had drained and the first finish
 *   signals went out;
 * - `crawl-finish-window.json`: the last run, started in the finishing phase, taking the final reports.
 *
 * `crawl-finish-start.json` and `crawl-finish.json` were recorded by this script before the window
 * (at 7808abd, under those names): they keep the path of runs that began before it.
 *
 * 80 one-page loopback origins are crawled with `continueAsNewAfterEvents: 200` (the smallest
 * allowed): finishing them takes more events than one run may hold. Kept apart from
 * record-histories.ts so re-recording one never rewrites the other.
 */

import type { temporal } from '@temporalio/proto';
import { crawlWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { carriedCrawlState } from '../testbed/crawl-runs';
import { pageHtml } from '../testbed/generated-site';
import { type SiteServer, serveSite } from '../testbed/site-server';
import {
  replaceInManifest,
  routeHtml,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-finish';
const ORIGINS = 80;

/** Whether the run began in the finishing phase. */
function startedFinishing(history: temporal.api.history.v1.IHistory): boolean {
  return carriedCrawlState(history)?.finishing === true;
}

function sentFinish(history: temporal.api.history.v1.IHistory): boolean {
  return (history.events ?? []).some(
    (event) => event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'finish',
  );
}

const sites: SiteServer[] = await Promise.all(Array.from({ length: ORIGINS }, () => serveSite(undefined)));
sites.forEach((site, i) => {
  routeHtml(
    site,
    '/',
    pageHtml(`Origin ${i}`, [], 'Fixture page for recording a crawl that finishes in turns.'),
  );
});
await withRecordingStack(sites, async (stack) => {
  const summary = await runFixtureCrawl(stack, {
    crawlId: CRAWL_ID,
    seeds: sites.map((site) => site.url),
    continueAsNewAfterEvents: 200,
  });
  const workflowId = crawlWorkflowId(CRAWL_ID);
  const runs: temporal.api.history.v1.IHistory[] = [];
  for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(await stack.client.workflow.getHandle(workflowId, run.runId).fetchHistory());
  // The list is newest first.
  const last = runs[0];
  const start = runs.find((run) => sentFinish(run) && !startedFinishing(run));
  if (
    summary.status !== 'completed' ||
    summary.pagesFetched !== ORIGINS ||
    !last ||
    !start ||
    !startedFinishing(last)
  ) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify({ summary, runs: runs.length })}`);
  }
  replaceInManifest(
    writeHistory(
      { file: 'crawl-finish-window-start.json', workflowId, workflowType: WORKFLOW_TYPES.crawl },
      start,
    ),
  );
  replaceInManifest(
    writeHistory({ file: 'crawl-finish-window.json', workflowId, workflowType: WORKFLOW_TYPES.crawl }, last),
  );
});
