/**
 * The rendering activity keeps the origin's gap between a page's own requests (document, stylesheet,
 * script, the data the script reads) with the one gap rule (`domain/politeness/gap.ts`): an input
 * scheduled before it carried `delayMs` is owed the spec's default delay, not nothing, and a
 * robots.txt Crawl-delay raises it. Real Chromium, a real PGlite store, a loopback site whose own
 * request log is the evidence.
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../../activities/render/browser-pool';
import { createRenderAndStore } from '../../../activities/render/render-and-store';
import { createRobotsPolicy } from '../../../activities/robots-policy';
import type { RenderAndStoreInput } from '../../../activities/types';
import type { PgliteDatabase } from '../../../db/pglite-database';
import { DEFAULT_DELAY_MS } from '../../../domain/politeness/gap';
import { runAsActivity } from '../../../testbed/activity-context';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../../testbed/loopback-store';
import { waitForNoProcesses } from '../../../testbed/process-groups';
import { type SiteServer, serveSite } from '../../../testbed/site-server';

let store: LoopbackStore;
let db: PgliteDatabase;
let pool: BrowserPool;
let site: SiteServer;
let slow: SiteServer;

const reply = (type: string, body: string) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);

/** A page that asks for a stylesheet, a script, and the data the script reads. */
function servePage(server: SiteServer, robotsTxt: string): void {
  server.route('/robots.txt', reply('text/plain', robotsTxt));
  server.route(
    '/page',
    reply(
      'text/html; charset=utf-8',
      `<!doctype html><html><head><title>paced</title><link rel="stylesheet" href="/site.css"></head>
       <body><main id="out"><h1>A paced page</h1><p>Its own requests keep the origin's gap.</p></main>
       <script src="/app.js"></script></body></html>`,
    ),
  );
  server.route('/site.css', reply('text/css', 'main { color: black; }'));
  server.route(
    '/app.js',
    reply(
      'text/javascript',
      `fetch('/api/data').then((r) => r.text()).then((t) => document.getElementById('out').append(' got ' + t));`,
    ),
  );
  server.route('/api/data', reply('text/plain', 'pacedataword'));
}

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-render-gap-');
  ({ db, site } = store);
  pool = new BrowserPool({ maxPages: 1 });
  servePage(site, 'User-agent: *\nAllow: /\n');
  slow = await serveSite(undefined);
  servePage(slow, 'User-agent: *\nCrawl-delay: 1.5\n');
}, 120_000);

afterAll(async () => {
  await pool?.close();
  if (pool) expect(await waitForNoProcesses(pool.launchedGroups, 10_000)).toEqual([]);
  await slow?.close();
  await store?.close();
});

/** Runs `work` as an activity of a worker would (the activity's context, with its cancellation). */
function asActivity<T>(work: () => Promise<T>): Promise<T> {
  return runAsActivity('renderAndStore', work);
}

/** A fetch spec as inputs scheduled before `delayMs` was passed to renders carried it: without one. */
const specOf = (server: SiteServer) =>
  loopbackFetchSpec(`${server.origin}/page`, { maxBodyBytes: 1024 * 1024 });

/** Renders the page and returns each gap, response end to next request, between its own requests. */
async function renderedGaps(server: SiteServer, crawlId: string): Promise<number[]> {
  const renderAndStore = createRenderAndStore({ db, robots: createRobotsPolicy({ db }), pool: () => pool });
  const input: RenderAndStoreInput = {
    crawlId,
    url: `${server.origin}/page`,
    depth: 0,
    spec: specOf(server),
  };
  const result = await asActivity(() => renderAndStore(input));
  expect(result.outcome).toBe('ok');
  const own = server.log.filter((entry) => entry.path !== '/robots.txt');
  expect(own[0]?.path).toBe('/page');
  expect(own.map((entry) => entry.path).sort()).toEqual(['/api/data', '/app.js', '/page', '/site.css']);
  return own.slice(1).map((entry, i) => entry.startedAtMs - (own[i]?.endedAtMs ?? 0));
}

describe("a rendered page's own requests", () => {
  it("keep the spec's default delay when the input carries no delayMs", async () => {
    const gaps = await renderedGaps(site, 'render-gap-default');
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(DEFAULT_DELAY_MS - 5);
  }, 60_000);

  it('keep a robots.txt Crawl-delay longer than that', async () => {
    const gaps = await renderedGaps(slow, 'render-gap-crawl-delay');
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1_500 - 5);
  }, 60_000);
});
