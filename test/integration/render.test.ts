/**
 * `--render auto` on a real stack (Temporal dev server, native Postgres, in-process workers with
 * real Chromium) against a loopback site that is half static pages, half a client-rendered app:
 * every app route is found, rendered and searchable; static pages are never rendered; the origin's
 * politeness gap holds across plain fetches and browser navigations (server's own log); the app's
 * attempts to read a robots-disallowed path and a loopback server outside allow-hosts get nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeRenderPool, configureRenderPool } from '../../activities/render/render-and-store';
import { crawlWorkflowId, originWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { type SpaSite, serveSpaSite } from '../../testbed/spa-site';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';
import type { OriginResult } from '../../workflows/origin-workflow';

const DELAY_MS = 400;
const ITEMS = 6;

let stack: TestStack;
let spa: SpaSite;
let outsider: SiteServer;

beforeAll(async () => {
  // Another loopback server, on an address the crawl's allow-hosts do not name.
  outsider = await serveSite(undefined, { host: '127.0.0.2' });
  outsider.route('/secret', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' })
      .end('privateleakedsecret');
  });
  spa = await serveSpaSite({ itemCount: ITEMS, forbiddenUrl: `${outsider.origin}/secret` });
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.close();
  await spa?.close();
  await outsider?.close();
});

async function crawl(crawlId: string, render: string, site: SpaSite = spa): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [
      {
        crawlId,
        seeds: [site.server.url],
        delayMs: DELAY_MS,
        allowHosts: ['127.0.0.1'],
        sitemaps: false,
        render,
      },
    ],
  });
}

/** A page-level request (a fetch or a navigation) and everything the page loaded before the next one. */
const isPageRequest = (path: string) =>
  path === '/robots.txt' ||
  spa.staticPaths.some((p) => p.path === path) ||
  spa.appRoutes.some((r) => r.path === path);

describe('--render auto', () => {
  it('renders every app route and no static page, politely, and the app reads nothing it may not', async () => {
    const summary = await crawl('render-auto', 'auto');
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(spa.appRoutes.length + spa.staticPaths.length);
    expect(summary.pagesRendered).toBe(spa.appRoutes.length);

    const pages = await stack.db.query<{ url: string; fetch_tier: string }>(
      'SELECT url, fetch_tier FROM pages WHERE crawl_id = $1',
      ['render-auto'],
    );
    const tierOf = new Map(pages.rows.map((row) => [new URL(row.url).pathname, row.fetch_tier]));
    for (const route of spa.appRoutes) expect(tierOf.get(route.path), route.path).toBe('browser');
    for (const page of spa.staticPaths) expect(tierOf.get(page.path), page.path).toBe('http');

    // Searchable by words that exist only in the JSON the app loads at run time.
    for (const route of spa.appRoutes) {
      const hits = await stack.db.query<{ url: string }>(
        `SELECT url FROM gleaner_search($1, NULL, 5, search_mode => 'fulltext')`,
        [route.word],
      );
      expect(
        hits.rows.map((row) => new URL(row.url).pathname),
        route.word,
      ).toContain(route.path);
    }
    const indexed = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pages WHERE crawl_id = $1 AND indexed_at IS NOT NULL',
      ['render-auto'],
    );
    expect(indexed.rows[0]?.n).toBe(pages.rows.length);

    // Nothing from the disallowed path or the outside server reached the browser, or was even asked for.
    expect(spa.server.log.filter((entry) => entry.path.startsWith('/private/'))).toEqual([]);
    expect(outsider.log).toEqual([]);
    const leaked = await stack.db.query(
      `SELECT url FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.content LIKE '%leakedsecret%'`,
    );
    expect(leaked.rows).toEqual([]);
    const refusals = await stack.db.query<{ error: string }>(
      `SELECT error FROM fetches WHERE crawl_id = $1 AND tier = 'browser' AND error LIKE '%refused%'`,
      ['render-auto'],
    );
    expect(refusals.rows.length).toBeGreaterThan(0);

    // Politeness: each page request (plain fetch or browser navigation) starts at least the gap
    // after everything before it ended, the rendered page's own scripts and JSON included.
    const log = [...spa.server.log].sort((a, b) => a.startedAtMs - b.startedAtMs);
    const gaps: number[] = [];
    let lastEnd = Number.NEGATIVE_INFINITY;
    for (const entry of log) {
      if (isPageRequest(entry.path) && Number.isFinite(lastEnd)) gaps.push(entry.startedAtMs - lastEnd);
      lastEnd = Math.max(lastEnd, entry.endedAtMs);
    }
    expect(gaps.length).toBeGreaterThan(spa.appRoutes.length + spa.staticPaths.length);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DELAY_MS);

    // Learning: after two item routes proved to need the browser, later ones skipped the plain fetch.
    const itemRequests = spa.server.log.filter((entry) => entry.path.startsWith('/app/items/')).length;
    expect(itemRequests).toBeLessThan(2 * ITEMS);
    console.info(
      `render auto: ${summary.pagesRendered} rendered of ${summary.pagesFetched}; ${spa.server.log.length} requests; ` +
        `item route requests ${itemRequests} for ${ITEMS} items; smallest gap ${Math.min(...gaps)} ms`,
    );
  });

  it('with --render never the app routes stay empty shells and nothing is rendered', async () => {
    // A site of its own: the first test's pages are in the store, and a crawl of known pages is a
    // recrawl that revisits every one of them, links or not.
    const fresh = await serveSpaSite({ itemCount: ITEMS, forbiddenUrl: `${outsider.origin}/secret` });
    try {
      const summary = await crawl('render-never', 'never', fresh);
      expect(summary.status).toBe('completed');
      expect(summary.pagesRendered).toBe(0);
      // Only /app/ is linked from static pages; its shell has no links, so the other routes stay unknown.
      expect(summary.pagesFetched).toBe(fresh.staticPaths.length + 1);
    } finally {
      await fresh.close();
    }
  });

  it('without a browser, only the pages that need one fail, clearly, and their plain HTML is kept', async () => {
    await closeRenderPool();
    configureRenderPool({ executablePath: '/nonexistent/chromium' });
    // A site of its own, so this is a first crawl and not a recrawl of the pages above.
    const fresh = await serveSpaSite({ itemCount: ITEMS, forbiddenUrl: `${outsider.origin}/secret` });
    try {
      const summary = await crawl('render-no-browser', 'auto', fresh);
      expect(summary.status).toBe('completed');
      expect(summary.pagesRendered).toBe(0);
      // Static pages and the app's shell page (its links exist only after rendering).
      expect(summary.pagesFetched).toBe(fresh.staticPaths.length + 1);
      expect(summary.errors).toBe(1);
      const origin = await stack.client.workflow
        .getHandle(originWorkflowId('render-no-browser', fresh.server.origin))
        .result();
      expect((origin as OriginResult).stats.lastError).toMatch(
        /rendering failed, plain HTML kept: .*\/nonexistent\/chromium does not exist/,
      );
      const shell = await stack.db.query<{ fetch_tier: string }>(
        'SELECT fetch_tier FROM pages WHERE url = $1',
        [`${fresh.server.origin}/app/`],
      );
      expect(shell.rows).toEqual([{ fetch_tier: 'http' }]);
    } finally {
      await fresh.close();
      await closeRenderPool();
      configureRenderPool({ executablePath: '/usr/bin/chromium' });
    }
  });
});
