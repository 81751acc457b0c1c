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
import { originWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { pageHtml } from '../testbed/generated-site';
import { type SiteServer, serveSite } from '../testbed/site-server';
import {
  closedHistory,
  replaceInManifest,
  routeHtml,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture-spill';
const SECTIONS = 14;

function serve(site: SiteServer, pathname: string, links: string[]): void {
  routeHtml(
    site,
    pathname,
    pageHtml(`Page ${pathname}`, links, 'Fixture page for recording a spilling frontier.'),
  );
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
await withRecordingStack([big, feeder], async (stack) => {
  const summary = await runFixtureCrawl(stack, {
    crawlId: CRAWL_ID,
    seeds: [big.url, feeder.url],
    scope: 'same-site',
    frontierMaxUrls: 10,
  });
  const workflowId = originWorkflowId(CRAWL_ID, big.origin);
  const history = await closedHistory(stack, workflowId);
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
  const entry = { file: 'origin-spill.json', workflowId, workflowType: WORKFLOW_TYPES.origin };
  const spill = `; spillUrls ${activities.has('spillUrls') ? 'ran' : 'did not run'}`;
  replaceInManifest(writeHistory(entry, history, spill));
});
