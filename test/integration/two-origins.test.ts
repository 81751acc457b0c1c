/**
 * Politeness across origins, proven from each server's own request log: two origins crawled at
 * once, each origin's requests strictly one at a time and spaced by at least the minimum gap,
 * while the two origins proceed in parallel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  crawlWorkflowId,
  TASK_QUEUES,
  TOP_LEVEL_WORKFLOWS_QUERY,
  WORKFLOW_TYPES,
} from '../../domain/temporal-names';
import { addGeneratedPages } from '../../testbed/generated-site';
import { isProtocolFile, type RequestLogEntry, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const DELAY_MS = 300;
const PAGES = 8;
let stack: TestStack;
let a: SiteServer;
let b: SiteServer;

beforeAll(async () => {
  a = await serveSite(undefined);
  b = await serveSite(undefined);
  addGeneratedPages(a, PAGES, { crossLinks: [b.url] });
  addGeneratedPages(b, PAGES);
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  await a?.close();
  await b?.close();
});

function gapsMs(log: RequestLogEntry[]): number[] {
  const sorted = [...log].sort((x, y) => x.startedAtMs - y.startedAtMs);
  return sorted.slice(1).map((entry, i) => entry.startedAtMs - (sorted[i] as RequestLogEntry).endedAtMs);
}

describe('two origins crawled at once', () => {
  it('serialises and spaces each origin by the minimum gap, and runs the origins in parallel', async () => {
    const crawlId = 'two-origins';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        { crawlId, seeds: [a.url, b.url], delayMs: DELAY_MS, allowHosts: ['127.0.0.1'], scope: 'same-site' },
      ],
    });
    expect(summary.status).toBe('completed');
    expect(summary.origins).toBe(2);
    expect(summary.pagesFetched).toBe(2 * PAGES);

    for (const site of [a, b]) {
      // robots.txt and sitemap.xml first (404s here), then every page once; the gap holds for all.
      expect(site.log.map((entry) => entry.path).slice(0, 2)).toEqual(['/robots.txt', '/sitemap.xml']);
      expect(site.log).toHaveLength(PAGES + 2);
      const gaps = gapsMs(site.log);
      // Never two in flight (a negative gap would be an overlap), never closer than the delay.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DELAY_MS);
      console.info(`${site.origin}: ${site.log.length} requests, smallest gap ${Math.min(...gaps)} ms`);
    }
    // Parallel, not one global queue: the two origins' request windows overlap in time.
    const window = (log: RequestLogEntry[]) => [
      Math.min(...log.map((e) => e.startedAtMs)),
      Math.max(...log.map((e) => e.endedAtMs)),
    ];
    const [aStart, aEnd] = window(a.log) as [number, number];
    const [bStart, bEnd] = window(b.log) as [number, number];
    expect(aStart < bEnd && bStart < aEnd).toBe(true);
    // Started together, the second seed's origin begins half the stagger span (0.5 s for this gap)
    // after the first (crawl-start-stagger-v1): it waits 250 ms on a timer before its robots.txt, on
    // top of everything the first origin's opening also waits for.
    expect(bStart - aStart).toBeGreaterThanOrEqual(150);

    // Temporal Web's "crawls only" list (the query `gleaner dev` links to): the crawl is there, its
    // 2 origin and page batch children are not, though the unfiltered list holds them all.
    const listed = async (query?: string) => {
      const ids: string[] = [];
      for await (const execution of stack.client.workflow.list(query ? { query } : {}))
        ids.push(execution.workflowId);
      return ids;
    };
    // One id per workflow: an origin that drained first may have continued as new while idle.
    const all = [...new Set(await listed())];
    const children = all.filter((id) => id.startsWith(`${crawlWorkflowId(crawlId)}/`));
    expect(children.filter((id) => id.includes('/origin/'))).toHaveLength(2);
    // Pages go to batches of one origin's pages (each origin's 8 fit in one or a few), none alone.
    const batches = children.filter((id) => id.includes('/pages/'));
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(batches.length).toBeLessThan(2 * PAGES);
    expect(children).toHaveLength(2 + batches.length);
    expect(summary.pagesIndexed).toBe(2 * PAGES);
    const topLevel = await listed(TOP_LEVEL_WORKFLOWS_QUERY);
    expect(topLevel).toContain(crawlWorkflowId(crawlId));
    expect(topLevel.filter((id) => id.includes('/'))).toEqual([]);
  });

  it('keeps the whole crawl under the global request ceiling', async () => {
    const sites = [await serveSite(undefined), await serveSite(undefined), await serveSite(undefined)];
    for (const site of sites) addGeneratedPages(site, 4);
    try {
      const crawlId = 'global-ceiling';
      const rps = 4;
      const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
        taskQueue: TASK_QUEUES.crawl,
        workflowId: crawlWorkflowId(crawlId),
        args: [
          {
            crawlId,
            seeds: sites.map((site) => site.url),
            delayMs: 0,
            maxRequestsPerSecond: rps,
            allowHosts: ['127.0.0.1'],
            scope: 'same-site',
          },
        ],
      });
      expect(summary.pagesFetched).toBe(12);
      const starts = sites
        .flatMap((site) => site.log.filter((entry) => !isProtocolFile(entry.path)))
        .map((entry) => entry.startedAtMs)
        .sort((x, y) => x - y);
      const spanMs = (starts.at(-1) as number) - (starts[0] as number);
      // 12 pages at 4/s need at least 11 intervals of 250 ms (less a little grant-to-request jitter).
      expect(spanMs).toBeGreaterThanOrEqual(((starts.length - 1) * 1000) / rps - 250);
      console.info(`global ceiling: ${starts.length} pages over ${spanMs} ms at ${rps}/s`);
    } finally {
      for (const site of sites) await site.close();
    }
  });
});
