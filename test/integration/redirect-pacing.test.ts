/**
 * A redirect hop is a request to its origin like any other: proven from the server's own request log,
 * a chain of same-origin redirects keeps the origin's gap (the crawl's delay, raised by robots.txt
 * Crawl-delay) between the end of each 3xx and the next request. Before, the hops went out at once
 * (3 ms apart under `Crawl-delay: 1`).
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
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

/**
 * A site served as two origins: `http://127.0.0.1:P` redirects every path to `http://localhost:P`,
 * as a site redirects http to https or example.com to www; on localhost each page links four more.
 * `/away` on localhost redirects to another site (`outside`), whose own links are out of scope.
 */
interface MovedRequest {
  path: string;
  startedAtMs: number;
  endedAtMs: number;
}

async function movedSite(
  outside: SiteServer,
): Promise<{ site: SiteServer; servedMoved: string[]; movedLog: MovedRequest[] }> {
  const site = await serveSite(undefined);
  const servedMoved: string[] = [];
  // Every request to the moved origin (localhost), robots.txt included, as its server saw it.
  const movedLog: MovedRequest[] = [];
  const logMoved = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.headers.host?.startsWith('127.0.0.1')) return;
    const entry = { path: req.url ?? '', startedAtMs: performance.now(), endedAtMs: Number.NaN };
    movedLog.push(entry);
    res.on('finish', () => {
      entry.endedAtMs = performance.now();
    });
  };
  sites.push(site);
  const moved = `http://localhost:${site.port}`;
  const page = (n: number) =>
    `<title>Page ${n}</title><main><h1>Page ${n}</h1><p>${'Words about this page of the moved site. '.repeat(20)}</p>` +
    [1, 2].map((i) => `<a href="/p${n * 2 + i}">next ${n * 2 + i}</a>`).join(' ') +
    (n === 0 ? ' <a href="/away">away</a>' : '') +
    '</main>';
  const handler = (n: number) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    logMoved(req, res);
    if (req.headers.host?.startsWith('127.0.0.1'))
      return res.writeHead(301, { location: `${moved}${req.url}` }).end();
    servedMoved.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end(page(n));
  };
  site.route('/', handler(0));
  for (let n = 1; n <= 14; n++) site.route(`/p${n}`, handler(n));
  site.route('/away', (req, res) => {
    logMoved(req, res);
    res.writeHead(302, { location: outside.url }).end();
  });
  site.route('/robots.txt', (req, res) => {
    logMoved(req, res);
    res.writeHead(404).end();
  });
  return { site, servedMoved, movedLog };
}

describe('a seed that redirects to another origin', () => {
  it('brings the origin it lands on into scope, keeping its gap; a later redirect elsewhere does not', async () => {
    const outside = await serveSite(undefined);
    sites.push(outside);
    outside.route('/', (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Outside</title><a href="/o1">o1</a>'),
    );
    outside.route('/o1', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>o1</p>'));
    const { site, servedMoved, movedLog } = await movedSite(outside);
    const crawlId = 'seed-moved';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        { crawlId, seeds: [site.url], delayMs: 250, maxPages: 20, allowHosts: ['127.0.0.1', 'localhost'] },
      ],
    });
    expect(summary.status).toBe('completed');
    // Before, the crawl stopped at the seed: every link on the page it landed on was out of scope.
    expect(new Set(servedMoved.filter((path) => path.startsWith('/p'))).size).toBe(14);
    expect(summary.pagesFetched).toBeGreaterThanOrEqual(15);
    const recorded = await stack.db.query<{ url: string }>(
      'SELECT url FROM crawl_redirected_seeds WHERE crawl_id = $1',
      [crawlId],
    );
    expect(recorded.rows.map((row) => row.url)).toEqual([`http://localhost:${site.port}/`]);
    // `/away` is no seed: its redirect target is fetched as that page, but the outside site's links are not followed.
    expect(outside.log.map((entry) => entry.path)).not.toContain('/o1');
    // The moved origin's requests keep the crawl's gap, the ones the seed's fetch sent it (its
    // robots.txt, then the hop) and its own workflow's first ones included. Before, the robots.txt
    // and the hop went 1 ms apart.
    const sorted = [...movedLog].sort((a, b) => a.startedAtMs - b.startedAtMs);
    expect(sorted[0]?.path).toBe('/robots.txt');
    expect(sorted.filter((entry) => entry.path === '/robots.txt')).toHaveLength(1);
    for (const [i, entry] of sorted.entries()) {
      if (i === 0) continue;
      const previous = sorted[i - 1] as MovedRequest;
      expect(
        entry.startedAtMs - previous.endedAtMs,
        `${previous.path} → ${entry.path}`,
      ).toBeGreaterThanOrEqual(250);
    }
  });
});

/**
 * A seed on one port that moved to another (`http://127.0.0.1:A/` → `http://127.0.0.1:B/`): the moved
 * origin's sitemap and, on a recrawl, its known pages are judged by the widened scope too. Before,
 * both used the spec's scope alone: the sitemap's pages were dropped, and a recrawl reached the
 * moved site's pages only through links, so a page no longer linked was never visited again.
 */
describe('a recrawl of a seed that moved to another origin', () => {
  it("reads the moved origin's sitemap and re-queues its known pages, linked or not", async () => {
    const moved = await serveSite(undefined);
    const seed = await serveSite(undefined);
    sites.push(moved, seed);
    seed.route('/', (_req, res) => res.writeHead(301, { location: moved.url }).end());
    const words = (name: string) =>
      `${name}: ${Array.from({ length: 30 }, (_, i) => `${name}${i * 7}`).join(' ')}`;
    const links: Record<string, string[]> = { '/': ['/a', '/b'], '/a': ['/c'], '/b': [], '/c': [], '/s': [] };
    for (const path of Object.keys(links))
      moved.route(path, (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(pageHtml(`Moved ${path}`, links[path] ?? [], words(path.slice(1) || 'home'))),
      );
    // `/s` is linked by no page: only the sitemap names it.
    moved.route('/sitemap.xml', (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(
          `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${moved.origin}/s</loc></url></urlset>`,
        ),
    );
    const crawlMoved = (crawlId: string): Promise<CrawlSummary> =>
      stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
        taskQueue: TASK_QUEUES.crawl,
        workflowId: crawlWorkflowId(crawlId),
        args: [{ crawlId, seeds: [seed.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
      });
    const pagesServed = (from: number) =>
      new Set(
        moved.log
          .slice(from)
          .filter((entry) => entry.status === 200 && entry.path !== '/sitemap.xml')
          .map((entry) => entry.path),
      );

    const first = await crawlMoved('moved-seed-1');
    expect(first.status).toBe('completed');
    expect([...pagesServed(0)].sort()).toEqual(['/', '/a', '/b', '/c', '/s']);
    expect(first.pagesNew).toBe(5);

    // `/c` still answers, but no page links to it any more.
    links['/a'] = [];
    const logFrom = moved.log.length;
    const second = await crawlMoved('moved-seed-2');
    expect(second.status).toBe('completed');
    expect([...pagesServed(logFrom)].sort()).toEqual(['/', '/a', '/b', '/c', '/s']);
    // `/a` changed (its link went), the rest did not.
    expect([second.pagesNew, second.pagesChanged, second.pagesUnchanged]).toEqual([0, 1, 4]);
    const fromStore = await stack.db.query<{ url: string }>(
      `SELECT url FROM crawl_urls WHERE crawl_id = 'moved-seed-2' AND origin = $1 AND source = 'store' ORDER BY url`,
      [moved.origin],
    );
    expect(fromStore.rows.map((row) => new URL(row.url).pathname)).toEqual(['/c', '/s']);
  });
});
