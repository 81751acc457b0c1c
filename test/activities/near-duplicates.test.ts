/**
 * Exact and near copies found at the page content step, against a real PGlite store and a loopback
 * site: the fetch activity stores each page, then the page's SimHash is settled as the page content
 * activity settles it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import { settleNearDuplicate } from '../../activities/near-duplicates';
import { createRobotsPolicy } from '../../activities/robots-policy';
import type { PgliteDatabase } from '../../db/pglite-database';
import { runAsActivity } from '../../testbed/activity-context';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../testbed/loopback-store';
import type { SiteServer } from '../../testbed/site-server';

let store: LoopbackStore;
let db: PgliteDatabase;
let site: SiteServer;

const words = (seed: string) => Array.from({ length: 60 }, (_, i) => `${seed}${i}`).join(' ');
const page = (text: string) =>
  `<!doctype html><html><head><title>Mirror</title></head><body><main><p>${text}</p></main></body></html>`;

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-near-duplicates-');
  ({ db, site } = store);
}, 120_000);

afterAll(() => store?.close());

function serve(pathname: string, text: string): void {
  site.route(pathname, (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(text)),
  );
}

function fetchAndStore(crawlId: string, pathname: string) {
  const activity = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  return runAsActivity('fetchAndStore', () =>
    activity({ crawlId, url: `${site.origin}${pathname}`, depth: 1, spec: loopbackFetchSpec(site.url) }),
  );
}

async function duplicateKinds() {
  const { rows } = await db.query<{ url: string; kind: string | null }>(
    `SELECT url, duplicate_kind AS kind FROM pages WHERE url LIKE $1 ORDER BY url`,
    [`${site.origin}/mirror-%`],
  );
  return rows.map((r) => `${r.url.slice(site.origin.length)} ${r.kind}`);
}

describe('two pages that change to the same body in one recrawl', () => {
  it('file the later one as an exact copy, never as a near one', async () => {
    // First crawl: /mirror-b copies /mirror-a byte for byte; /mirror-a is indexed.
    serve('/mirror-a', words('old'));
    serve('/mirror-b', words('old'));
    const a = await fetchAndStore('c1', '/mirror-a');
    await fetchAndStore('c1', '/mirror-b');
    await db.query('UPDATE pages SET indexed_at = now() WHERE id = $1', [a.pageId ?? null]);
    expect(await duplicateKinds()).toEqual(['/mirror-a null', '/mirror-b exact']);

    // Both change to the same new body; the copy is fetched first, while the original still has the
    // old one, and the original then finds no indexed page with its new body: both are extracted.
    serve('/mirror-a', words('new'));
    serve('/mirror-b', words('new'));
    const b2 = await fetchAndStore('c2', '/mirror-b');
    const a2 = await fetchAndStore('c2', '/mirror-a');
    for (const fetched of [b2, a2]) {
      if (fetched.current) continue;
      await db.transaction((tx) => settleNearDuplicate(tx, fetched.pageId as number, words('new')));
    }
    const kinds = await duplicateKinds();
    expect(kinds.filter((kind) => kind.endsWith(' null'))).toHaveLength(1);
    expect(kinds.filter((kind) => kind.endsWith(' exact'))).toHaveLength(1);
  });
});
