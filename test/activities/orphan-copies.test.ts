/**
 * Copies whose original left search, at the crawl's end, against a real PGlite store and a loopback
 * site: the fetch activity stores and revisits each page, then the copies left searchable nowhere are
 * released for the crawl to index.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import { settleNearDuplicate } from '../../activities/near-duplicates';
import { releaseOrphanCopies } from '../../activities/orphan-copies';
import { createRobotsPolicy } from '../../activities/robots-policy';
import type { PgliteDatabase } from '../../db/pglite-database';
import { runAsActivity } from '../../testbed/activity-context';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../testbed/loopback-store';
import type { SiteServer } from '../../testbed/site-server';

let store: LoopbackStore;
let db: PgliteDatabase;
let site: SiteServer;

const body =
  '<!doctype html><html><head><title>Field guide</title></head><body><main><h1>Field guide</h1>' +
  '<p>The field guide has a paragraph of its own words, long enough to be a page worth indexing.</p></main></body></html>';

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-orphan-copies-');
  ({ db, site } = store);
}, 120_000);

afterAll(() => store?.close());

/** Serves the body with an ETag, answering a revalidation with 304; or 404 once gone. */
function serve(pathname: string, state: { gone: boolean }): void {
  site.route(pathname, (req, res) => {
    if (state.gone) res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>gone</h1>');
    else if (req.headers['if-none-match'] === '"v1"') res.writeHead(304, { etag: '"v1"' }).end();
    else res.writeHead(200, { etag: '"v1"', 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
}

function fetchAndStore(crawlId: string, pathname: string) {
  const activity = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  return runAsActivity('fetchAndStore', () =>
    activity({ crawlId, url: `${site.origin}${pathname}`, depth: 1, spec: loopbackFetchSpec(site.url) }),
  );
}

describe('an exact copy whose original is gone', () => {
  it('is released at the crawl end even when it answered 304', async () => {
    const original = { gone: false };
    serve('/guide', original);
    serve('/guide-copy', { gone: false });
    await fetchAndStore('c1', '/guide');
    const copy = await fetchAndStore('c1', '/guide-copy');
    expect(copy).toMatchObject({ duplicate: true });

    // The recrawl revisits the copy first (304: still a copy), then finds the original gone.
    original.gone = true;
    expect(await fetchAndStore('c2', '/guide-copy')).toMatchObject({ outcome: 'not-modified' });
    expect(await fetchAndStore('c2', '/guide')).toMatchObject({ change: 'removed' });

    const { released } = await releaseOrphanCopies(db, { crawlId: 'c2' });
    expect(released).toEqual([{ origin: site.origin, pageIds: [copy.pageId] }]);
    const { rows } = await db.query<{ kind: string | null }>(
      'SELECT duplicate_kind AS kind FROM pages WHERE id = $1',
      [copy.pageId ?? null],
    );
    expect(rows[0]?.kind).toBeNull();
  });
});

describe('a near copy whose original is gone', () => {
  it('is released at the crawl end with its extraction cleared, so it is indexed again', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const near = { gone: false };
    const original = { gone: false };
    site.route('/atlas', (_req, res) =>
      original.gone
        ? res.writeHead(404).end()
        : res.writeHead(200, { 'content-type': 'text/html' }).end(`<main><p>${words}</p></main>`),
    );
    site.route('/atlas-print', (req, res) => {
      if (near.gone) res.writeHead(404).end();
      else if (req.headers['if-none-match'] === '"p1"') res.writeHead(304, { etag: '"p1"' }).end();
      else
        res
          .writeHead(200, { etag: '"p1"', 'content-type': 'text/html' })
          .end(`<main><p>${words} printable</p></main>`);
    });
    const first = await fetchAndStore('c3', '/atlas');
    const copy = await fetchAndStore('c3', '/atlas-print');
    // As the page content activity leaves them: extracted, the second a near copy of the first.
    for (const [page, text] of [
      [first, words],
      [copy, `${words} printable`],
    ] as const) {
      await db.query('UPDATE pages SET extracted_hash = content_hash WHERE id = $1', [page.pageId ?? null]);
      await db.transaction((tx) => settleNearDuplicate(tx, page.pageId as number, text));
    }

    original.gone = true;
    expect(await fetchAndStore('c4', '/atlas-print')).toMatchObject({ outcome: 'not-modified' });
    expect(await fetchAndStore('c4', '/atlas')).toMatchObject({ change: 'removed' });
    const { released } = await releaseOrphanCopies(db, { crawlId: 'c4' });
    expect(released).toEqual([{ origin: site.origin, pageIds: [copy.pageId] }]);
    const { rows } = await db.query<{ kind: string | null; extracted: boolean }>(
      'SELECT duplicate_kind AS kind, extracted_hash IS NOT NULL AS extracted FROM pages WHERE id = $1',
      [copy.pageId ?? null],
    );
    expect(rows[0]).toEqual({ kind: null, extracted: false });
  });
});
