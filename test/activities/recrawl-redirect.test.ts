/**
 * A known page that now redirects, at the fetch activity against a real PGlite store and a loopback
 * site: the target is stored under its own URL, and the page itself leaves search as a 404 would,
 * with its `removed` verdict and change event; it comes back when it answers 200 again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import { createRobotsPolicy } from '../../activities/robots-policy';
import type { FetchAndStoreResult } from '../../activities/types';
import type { PgliteDatabase } from '../../db/pglite-database';
import { countVisit, emptyOriginStats } from '../../domain/origin-stats';
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

function fetchAndStore(crawlId: string, pathname: string, attempt = 1) {
  const activity = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  return runAsActivity(
    'fetchAndStore',
    () =>
      activity({ crawlId, url: `${site.origin}${pathname}`, depth: 1, spec: loopbackFetchSpec(site.url) }),
    { attempt },
  );
}

/**
 * A recrawl as the origin workflow runs it: every known URL, then what the fetches hand back, each
 * fetched once; the verdicts counted by the workflow's own counter.
 */
async function recrawl(crawlId: string, known: string[]) {
  const queue = [...known];
  const seen = new Set(queue);
  const stats = emptyOriginStats();
  const results: FetchAndStoreResult[] = [];
  while (queue.length > 0) {
    const result = await fetchAndStore(crawlId, queue.shift() as string);
    results.push(result);
    countVisit(stats, result);
    for (const found of result.discovered) {
      const pathname = new URL(found.url).pathname;
      if (!seen.has(pathname)) queue.push(pathname);
      seen.add(pathname);
    }
  }
  return { stats, results };
}

/** page_changes of a crawl, counted as the summary counts them. */
async function recordedCounts(crawlId: string) {
  const { rows } = await db.query<{ change: string; n: number }>(
    'SELECT change, count(*)::int AS n FROM page_changes WHERE crawl_id = $1 GROUP BY change',
    [crawlId],
  );
  const n = (change: string) => rows.find((r) => r.change === change)?.n ?? 0;
  return {
    pagesNew: n('new'),
    pagesChanged: n('changed'),
    pagesUnchanged: n('unchanged'),
    pagesRemoved: n('removed'),
  };
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

describe('the crawl summary of a recrawl with moved pages and aliases', () => {
  it('counts each verdict of page_changes once, a moved page and its new URL both', async () => {
    serve('/home', { html: page('Home') });
    serve('/moving', { html: page('Moving') });
    serve('/home-alias', { redirectTo: '/home' });
    serve('/staying', { html: page('Staying') });
    await recrawl('c8', ['/home', '/moving', '/home-alias', '/staying']);

    // /moving moved to a URL the store does not know; /staying moved to one it knows.
    serve('/moved', { html: page('Moved') });
    serve('/moving', { redirectTo: '/moved' });
    serve('/staying', { redirectTo: '/home' });
    const { stats, results } = await recrawl('c9', ['/moving', '/home-alias', '/staying', '/home']);
    const recorded = await recordedCounts('c9');
    expect(recorded).toEqual({ pagesNew: 1, pagesChanged: 0, pagesUnchanged: 1, pagesRemoved: 2 });
    expect({
      pagesNew: stats.pagesNew,
      pagesChanged: stats.pagesChanged,
      pagesUnchanged: stats.pagesUnchanged,
      pagesRemoved: stats.pagesRemoved,
    }).toEqual(recorded);
    // The new URL was fetched by its own URL to be counted, once.
    expect(results.filter((r) => r.finalUrl === `${site.origin}/moved`)).toHaveLength(2);
  });

  it('gives no verdict to a retried alias whose page another fetch counted meanwhile', async () => {
    serve('/atlas', { html: page('Atlas') });
    serve('/atlas-alias', { redirectTo: '/atlas' });
    await fetchAndStore('c10', '/atlas');
    // The alias's first attempt died before it stored anything; the page's own fetch then counted it.
    expect(await fetchAndStore('c11', '/atlas')).toMatchObject({ change: 'unchanged' });
    const retried = await fetchAndStore('c11', '/atlas-alias', 2);
    expect(retried).toMatchObject({ outcome: 'ok', finalUrl: `${site.origin}/atlas` });
    expect(retried.change).toBeUndefined();

    // A retry of the fetch that counted a visit still reports it: its first result never arrived.
    serve('/globe', { html: page('Globe') });
    serve('/globe-alias', { redirectTo: '/globe' });
    await fetchAndStore('c10', '/globe');
    expect(await fetchAndStore('c11', '/globe-alias')).toMatchObject({ change: 'unchanged' });
    expect(await fetchAndStore('c11', '/globe-alias', 2)).toMatchObject({ change: 'unchanged' });
  });
});

describe('a known page that became a redirect stub, or redirects where the crawl goes no further', () => {
  const searchable = async (pathname: string) => {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.url = $1',
      [`${site.origin}${pathname}`],
    );
    return (rows[0]?.n ?? 0) > 0;
  };
  const chunkOf = (pathname: string) =>
    db.query(
      // As its page workflow would have left it: one chunk of its old text.
      `INSERT INTO chunks (page_id, position, chunk_hash, content, token_count)
       SELECT id, 0, 'h', 'old text', 2 FROM pages WHERE url = $1`,
      [`${site.origin}${pathname}`],
    );

  it('leaves search with a removed verdict and event, and comes back with content', async () => {
    serve('/shim', { html: page('Shim') });
    serve('/shim-target', { html: page('Shim target') });
    expect(await fetchAndStore('c12', '/shim')).toMatchObject({ change: 'new' });
    await chunkOf('/shim');
    expect(await searchable('/shim')).toBe(true);

    serve('/shim', {
      html: '<!doctype html><html><head><meta http-equiv="refresh" content="0; url=/shim-target"></head><body>Moved</body></html>',
    });
    expect(await fetchAndStore('c13', '/shim')).toMatchObject({ outcome: 'ok', change: 'removed' });
    expect(await row('/shim')).toEqual({ removed: true, removed_reason: 'meta-refresh-stub' });
    expect(await searchable('/shim')).toBe(false);
    expect(await verdicts('c13')).toEqual([{ url: '/shim', change: 'removed', status: 200 }]);
    expect(await events('c13')).toEqual(['removed /shim']);
    // Still a stub next time: unchanged, nothing announced again.
    expect(await fetchAndStore('c14', '/shim')).toMatchObject({ change: 'unchanged' });
    expect(await events('c14')).toEqual([]);

    serve('/shim', { html: page('Shim') });
    expect(await fetchAndStore('c15', '/shim')).toMatchObject({ change: 'changed' });
    expect(await row('/shim')).toEqual({ removed: false, removed_reason: null });
    expect(await events('c15')).toEqual(['changed /shim']);
  });

  it('takes a page that now redirects to a stub out of search too', async () => {
    serve('/handbook', { html: page('Handbook') });
    expect(await fetchAndStore('c18', '/handbook')).toMatchObject({ change: 'new' });
    await chunkOf('/handbook');
    serve('/handbook-shim', {
      html: '<!doctype html><html><head><script>window.location.replace("/handbook-v2")</script></head><body></body></html>',
    });
    serve('/handbook', { redirectTo: '/handbook-shim' });
    expect(await fetchAndStore('c19', '/handbook')).toMatchObject({ change: 'removed' });
    expect(await row('/handbook')).toEqual({ removed: true, removed_reason: 'http-301' });
    expect(await searchable('/handbook')).toBe(false);
  });

  it('takes a page that now redirects to a login wall out of search', async () => {
    serve('/members', { html: page('Members') });
    expect(await fetchAndStore('c16', '/members')).toMatchObject({ change: 'new' });
    await chunkOf('/members');

    serve('/members', { redirectTo: '/login?next=/members' });
    const walled = await fetchAndStore('c17', '/members');
    expect(walled).toMatchObject({ outcome: 'redirect-limit', change: 'removed' });
    expect(await row('/members')).toEqual({ removed: true, removed_reason: 'redirect-not-followed' });
    expect(await searchable('/members')).toBe(false);
    expect(await events('c17')).toEqual(['removed /members']);
  });
});
