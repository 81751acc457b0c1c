/**
 * `perOriginConcurrency`, proven from the servers' own request logs: an origin whose robots.txt
 * sets no Crawl-delay takes up to N requests at once (never more), with starts still spaced by the
 * gap; an origin whose robots.txt sets a Crawl-delay stays strictly one at a time in the same
 * crawl. Every page answers slowly (a fixed delay before the response), so overlaps show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
import { isProtocolFile, type RequestLogEntry, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const CONCURRENCY = 3;
const DELAY_MS = 60;
const SLOW_MS = 450;
const CRAWL_DELAY_S = 0.2;
let stack: TestStack;
let open: SiteServer;
let delayed: SiteServer;

/** `pages` pages (the root links to all), each answered after `slowMs`. */
function addSlowPages(site: SiteServer, pages: number, slowMs: number): void {
  const paths = Array.from({ length: pages }, (_, i) => (i === 0 ? '/' : `/slow-${i}.html`));
  paths.forEach((path, i) => {
    const html = pageHtml(`Slow page ${i}`, i === 0 ? paths.slice(1) : [], 'Some text. '.repeat(40));
    site.route(path, (_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html), slowMs);
    });
  });
}

/** Most requests in flight at once, from the log's [start, end] intervals. */
function maxInFlight(log: RequestLogEntry[]): number {
  const events = log.flatMap((e) => [
    { at: e.startedAtMs, delta: 1 },
    { at: e.endedAtMs, delta: -1 },
  ]);
  // An end and a start at the same millisecond do not overlap.
  events.sort((x, y) => x.at - y.at || x.delta - y.delta);
  let current = 0;
  let max = 0;
  for (const event of events) {
    current += event.delta;
    max = Math.max(max, current);
  }
  return max;
}

beforeAll(async () => {
  open = await serveSite(undefined);
  delayed = await serveSite(undefined);
  addSlowPages(open, 13, SLOW_MS);
  addSlowPages(delayed, 5, 150);
  delayed.route('/robots.txt', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nCrawl-delay: ${CRAWL_DELAY_S}\n`);
  });
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  await open?.close();
  await delayed?.close();
});

describe('perOriginConcurrency', () => {
  it('runs up to N requests at once on an origin without Crawl-delay, and one at a time on one with it', async () => {
    const crawlId = 'per-origin-concurrency';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        {
          crawlId,
          seeds: [open.url, delayed.url],
          delayMs: DELAY_MS,
          perOriginConcurrency: CONCURRENCY,
          allowHosts: ['127.0.0.1'],
        },
      ],
    });
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(13 + 5);

    const openPages = open.log.filter((e) => !isProtocolFile(e.path));
    expect(openPages).toHaveLength(13);
    expect(new Set(openPages.map((e) => e.path)).size).toBe(13);
    const peak = maxInFlight(open.log);
    // More than one at a time (the setting works) and never more than N (the bound holds).
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(CONCURRENCY);
    // Starts are scheduled at least the gap apart, so the origin never sees more than one start
    // per gap on average (activity dispatch can bring two single starts closer on the server).
    const starts = openPages.map((e) => e.startedAtMs).sort((x, y) => x - y);
    const startGaps = starts.slice(1).map((at, i) => at - (starts[i] as number));
    const meanStartGap = ((starts.at(-1) as number) - (starts[0] as number)) / (starts.length - 1);
    expect(meanStartGap).toBeGreaterThanOrEqual(DELAY_MS);

    // The Crawl-delay origin: strictly sequential, every gap (end → next start) at least the delay.
    expect(maxInFlight(delayed.log)).toBe(1);
    const sorted = [...delayed.log].sort((x, y) => x.startedAtMs - y.startedAtMs);
    const gaps = sorted.slice(1).map((e, i) => e.startedAtMs - (sorted[i] as RequestLogEntry).endedAtMs);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(CRAWL_DELAY_S * 1000);
    console.info(
      `no Crawl-delay: peak ${peak} in flight, start gaps mean ${meanStartGap.toFixed(0)} ms, smallest ${Math.min(...startGaps)} ms; ` +
        `Crawl-delay ${CRAWL_DELAY_S} s: peak 1, smallest gap ${Math.min(...gaps)} ms`,
    );
  });
});
