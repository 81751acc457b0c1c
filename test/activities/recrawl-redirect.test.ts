/**
 * A known page that now redirects, at the fetch activity against a real PGlite store and a loopback
 * site: the target is stored under its own URL, and the page itself leaves search as a 404 would,
 * with its `removed` verdict and change event; it comes back when it answers 200 again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import { createRobotsPolicy } from '../../activities/robots-policy';
import type { PgliteDatabase } from '../../db/pglite-database';
import { runAsActivity } from '../../testbed/activity-context';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../testbed/loopback-store';
import type { SiteServer } from '../../testbed/site-server';

let store: LoopbackStore;
let db: PgliteDatabase;
let site: SiteServer;

const page = (title: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>` +
  `<p>${title} has a paragraph of its own words, long enough to be a page worth indexing.</p></main></body></html>`;

function serve(pathname: string, answer: { html: string } | { redirectTo: string }): void {
  site.route(pathname, (_req, res) => {
    if ('html' in answer) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(answer.html);
    else res.writeHead(301, { location: answer.redirectTo }).end();
  });
}

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-recrawl-redirect-');
  ({ db, site } = store);
}, 120_000);

afterAll(() => store?.close());

function fetchAndStore(crawlId: string, pathname: string) {
  const activity = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  return runAsActivity('fetchAndStore', () =>
    activity({ crawlId, url: `${site.origin}${pathname}`, depth: 1, spec: loopbackFetchSpec(site.url) }),
  );
}

async function row(pathname: string) {
  const { rows } = await db.query<{ removed: boolean; removed_reason: string | null }>(
    'SELECT removed_at IS NOT NULL AS removed, removed_reason FROM pages WHERE url = $1',
    [`${site.origin}${pathname}`],
  );
  return rows[0];
}

async function verdicts(crawlId: string) {
  const { rows } = await db.query<{ url: string; change: string; status: number }>(
    'SELECT url, change, status FROM page_changes WHERE crawl_id = $1 ORDER BY url',
    [crawlId],
  );
  return rows.map((r) => ({ ...r, url: r.url.slice(site.origin.length) }));
}

async function events(crawlId: string) {
  const { rows } = await db.query<{ url: string; kind: string }>(
    'SELECT url, kind FROM change_events WHERE crawl_id = $1 ORDER BY seq',
    [crawlId],
  );
  return rows.map((r) => `${r.kind} ${r.url.slice(site.origin.length)}`);
}

describe('a known page that now redirects', () => {
  it('leaves search with a removed verdict and event, and comes back when it answers 200 again', async () => {
    serve('/old', { html: page('Old page') });
    serve('/new', { html: page('New page') });
    expect(await fetchAndStore('c1', '/old')).toMatchObject({ outcome: 'ok', change: 'new' });
    expect(await fetchAndStore('c1', '/new')).toMatchObject({ outcome: 'ok', change: 'new' });

    serve('/old', { redirectTo: '/new' });
    // The fetch reports the verdict on the page it asked for (the summary counts it), not its target's.
    expect(await fetchAndStore('c2', '/old')).toMatchObject({
      outcome: 'ok',
      finalUrl: `${site.origin}/new`,
      change: 'removed',
    });
    expect(await row('/old')).toEqual({ removed: true, removed_reason: 'http-301' });
    expect(await row('/new')).toEqual({ removed: false, removed_reason: null });
    expect(await verdicts('c2')).toEqual([
      { url: '/new', change: 'unchanged', status: 200 },
      { url: '/old', change: 'removed', status: 301 },
    ]);
    expect(await events('c2')).toEqual(['removed /old']);

    // A retried attempt records nothing twice.
    await fetchAndStore('c2', '/old');
    expect(await events('c2')).toEqual(['removed /old']);

    // Still moved on the next recrawl: an unchanged visit of the tombstone, nothing announced again.
    expect(await fetchAndStore('c3', '/old')).toMatchObject({ outcome: 'ok', change: 'unchanged' });
    expect(await verdicts('c3')).toEqual([
      { url: '/new', change: 'unchanged', status: 200 },
      { url: '/old', change: 'unchanged', status: 301 },
    ]);
    expect(await events('c3')).toEqual([]);

    serve('/old', { html: page('Old page') });
    expect(await fetchAndStore('c4', '/old')).toMatchObject({ outcome: 'ok', change: 'changed' });
    expect(await row('/old')).toEqual({ removed: false, removed_reason: null });
    expect(await events('c4')).toEqual(['changed /old']);
  });
});

describe('a redirect to a page the crawl already visited', () => {
  it('reports no second verdict for that page, so the summary counts it once', async () => {
    serve('/guide', { html: page('Guide') });
    serve('/guide-alias', { redirectTo: '/guide' });
    expect(await fetchAndStore('c5', '/guide')).toMatchObject({ outcome: 'ok', change: 'new' });
    const alias = await fetchAndStore('c5', '/guide-alias');
    expect(alias).toMatchObject({ outcome: 'ok', finalUrl: `${site.origin}/guide` });
    expect(alias.change).toBeUndefined();
    expect(alias.indexed).toBeUndefined();
    expect(await verdicts('c5')).toEqual([{ url: '/guide', change: 'new', status: 200 }]);

    // Reached only through the alias, the page is counted there.
    serve('/only-aliased', { html: page('Only aliased') });
    serve('/only-alias', { redirectTo: '/only-aliased' });
    expect(await fetchAndStore('c5', '/only-alias')).toMatchObject({ change: 'new' });
  });
});

describe('a page visited through an alias, then by its own URL', () => {
  it('is counted at its first visit only, whether the second is a 200 or a 304', async () => {
    serve('/manual', { html: page('Manual') });
    serve('/manual-alias', { redirectTo: '/manual' });
    await fetchAndStore('c6', '/manual');
    expect(await fetchAndStore('c7', '/manual-alias')).toMatchObject({ change: 'unchanged' });
    const direct = await fetchAndStore('c7', '/manual');
    expect(direct).toMatchObject({ outcome: 'ok' });
    expect(direct.change).toBeUndefined();
    expect(await verdicts('c7')).toEqual([{ url: '/manual', change: 'unchanged', status: 200 }]);

    // Served with an ETag, the second visit is a 304.
    site.route('/etagged', (req, res) => {
      if (req.headers['if-none-match'] === '"e1"') res.writeHead(304, { etag: '"e1"' }).end();
      else res.writeHead(200, { etag: '"e1"', 'content-type': 'text/html' }).end(page('Etagged'));
    });
    serve('/etagged-alias', { redirectTo: '/etagged' });
    await fetchAndStore('c6', '/etagged');
    expect(await fetchAndStore('c7', '/etagged-alias')).toMatchObject({ change: 'unchanged' });
    const notModified = await fetchAndStore('c7', '/etagged');
    expect(notModified).toMatchObject({ outcome: 'not-modified' });
    expect(notModified.change).toBeUndefined();
  });
});
