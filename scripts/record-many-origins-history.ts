/**
 * Records the first run of a crawl of 40 one-page loopback origins, each linking to a second page
 * of the next, for test/workflows/replay.test.ts and crawl-generations.test.ts:
 *
 *   npx tsx scripts/record-many-origins-history.ts FILE
 *
 * Many origins at once are what tell the crawl workflow's generations apart (many child starts and
 * quota requests in one turn). The committed crawl-many-origins-{one-by-one,chunked,quota-first}.json
 * were recorded on 74e18ae with the older generation forced for this first run, by replacing one
 * `patched('crawl-…-v1')` call in crawlWorkflow with `false` (now: in workflows/crawl-generations.ts).
 * The run must not continue as new (a continued run takes the newest generation).
 *
 *   npx tsx scripts/record-many-origins-history.ts FILE ORIGIN_FILE
 *
 * also records the first run of the second seed's origin workflow as ORIGIN_FILE: since
 * `crawl-start-stagger-v1` it starts with `startAfterMs` and waits on a timer before its robots.txt
 * (crawl-many-origins-staggered.json and origin-staggered.json were recorded so, on the commit that
 * added the stagger).
 */
import type { temporal } from '@temporalio/proto';
import { crawlWorkflowId, originWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { pageHtml } from '../testbed/generated-site';
import { type SiteServer, serveSite } from '../testbed/site-server';
import type { TestStack } from '../testbed/stack';
import {
  replaceInManifest,
  routeHtml,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-many';
const ORIGINS = 40;
const file = process.argv[2];
const originFile = process.argv[3];
if (!file?.endsWith('.json') || (originFile !== undefined && !originFile.endsWith('.json')))
  throw new Error('usage: record-many-origins-history.ts FILE.json [ORIGIN_FILE.json]');

const sites: SiteServer[] = await Promise.all(Array.from({ length: ORIGINS }, () => serveSite(undefined)));
sites.forEach((site, i) => {
  const next = sites[(i + 1) % ORIGINS] as SiteServer;
  routeHtml(site, '/', pageHtml(`Origin ${i}`, [`${next.origin}/b`], 'Fixture page, many origins.'));
  routeHtml(site, '/b', pageHtml(`Origin ${i} b`, [], 'Second fixture page.'));
});
await withRecordingStack(sites, async (stack) => {
  const summary = await runFixtureCrawl(stack, { crawlId: CRAWL_ID, seeds: sites.map((site) => site.url) });
  const workflowId = crawlWorkflowId(CRAWL_ID);
  const runs: temporal.api.history.v1.IHistory[] = [];
  for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(await stack.client.workflow.getHandle(workflowId, run.runId).fetchHistory());
  const [only] = runs;
  if (summary.status !== 'completed' || summary.pagesFetched !== 2 * ORIGINS || runs.length !== 1 || !only) {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify({ summary, runs: runs.length })}`);
  }
  replaceInManifest(writeHistory({ file, workflowId, workflowType: WORKFLOW_TYPES.crawl }, only));
  if (originFile) {
    const originId = originWorkflowId(CRAWL_ID, (sites[1] as SiteServer).origin);
    const firstRun = await stack.client.workflow
      .getHandle(originId, await firstRunId(stack, originId))
      .fetchHistory();
    replaceInManifest(
      writeHistory({ file: originFile, workflowId: originId, workflowType: WORKFLOW_TYPES.origin }, firstRun),
    );
  }
});

/** The run an origin workflow began with (it may have continued as new since). */
async function firstRunId(stack: TestStack, workflowId: string): Promise<string> {
  let first: { runId: string; startTime: Date } | undefined;
  for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    if (!first || run.startTime < first.startTime) first = run;
  if (!first) throw new Error(`no run of ${workflowId}`);
  return first.runId;
}
