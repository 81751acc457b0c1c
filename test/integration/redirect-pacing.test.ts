/**
 * A redirect hop is a request to its origin like any other: proven from the server's own request log,
 * a chain of same-origin redirects keeps the origin's gap (the crawl's delay, raised by robots.txt
 * Crawl-delay) between the end of each 3xx and the next request. Before, the hops went out at once
 * (3 ms apart under `Crawl-delay: 1`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { type RequestLogEntry, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
const sites: SiteServer[] = [];

/** A site whose root redirects twice (301, then 302) to its one page, with the given robots.txt. */
async function redirectingSite(robots?: string): Promise<SiteServer> {
  const site = await serveSite(undefined);
  sites.push(site);
  if (robots)
    site.route('/robots.txt', (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end(robots),
    );
  site.route('/', (_req, res) => res.writeHead(301, { location: '/hop' }).end());
  site.route('/hop', (_req, res) => res.writeHead(302, { location: '/page' }).end());
  site.route('/page', (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<title>Arrived</title><p>The page at the end of the chain.</p>'),
  );
  return site;
}

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  for (const site of sites) await site.close();
});

/** Each request's start less the previous one's end, in the order the server saw them. */
function gapsMs(log: RequestLogEntry[]): Array<{ path: string; gapMs: number }> {
  const sorted = [...log].sort((x, y) => x.startedAtMs - y.startedAtMs);
  return sorted.slice(1).map((entry, i) => ({
    path: entry.path,
    gapMs: entry.startedAtMs - (sorted[i] as RequestLogEntry).endedAtMs,
  }));
}

async function crawl(crawlId: string, site: SiteServer, delayMs: number): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [{ crawlId, seeds: [site.url], delayMs, allowHosts: ['127.0.0.1'] }],
  });
}

describe('redirect hops within an origin', () => {
  it('keep the crawl delay between the end of each redirect and the next request', async () => {
    const site = await redirectingSite();
    const summary = await crawl('redirect-pacing-delay', site, 400);
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(1);
    const hops = gapsMs(site.log).filter((gap) => gap.path === '/hop' || gap.path === '/page');
    expect(hops.map((gap) => gap.path)).toEqual(['/hop', '/page']);
    for (const hop of hops) expect(hop.gapMs, hop.path).toBeGreaterThanOrEqual(400);
  });

  it('keep a robots.txt Crawl-delay above the crawl delay', async () => {
    const site = await redirectingSite('User-agent: *\nCrawl-delay: 1\n');
    const summary = await crawl('redirect-pacing-crawl-delay', site, 50);
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(1);
    const gaps = gapsMs(site.log);
    expect(gaps.map((gap) => gap.path)).toEqual(expect.arrayContaining(['/', '/hop', '/page']));
    // Every request after robots.txt, hops included, at least the Crawl-delay after the one before.
    for (const gap of gaps) expect(gap.gapMs, gap.path).toBeGreaterThanOrEqual(1000);
  });
});
