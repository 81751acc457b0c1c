/**
 * The fetch activity against odd servers, with a real PGlite store and a loopback site: a page sent
 * without a Content-Type is stored as the page it is, a redirect to where no link would be followed
 * (a login wall, robots.txt) is not followed from a discovered page, and a link robots.txt refuses as
 * the page wrote it is not followed in the canonical form it would allow.
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

const PAGE =
  '<!DOCTYPE html><html><head><title>Runner beans</title></head><body><main><h1>Runner beans</h1>' +
  '<p>Runner beans climb any pole you give them and crop from July until the first frost.</p>' +
  '<a href="/sowing">Sowing</a></main></body></html>';
const LOGIN =
  '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form><input name="user">' +
  '<input name="password" type="password"><button>Sign in</button></form></body></html>';

const SEARCH_LINKS =
  '<!DOCTYPE html><html><head><title>Seed search</title></head><body><main><h1>Seed search</h1>' +
  '<p>Results for beans, and the next page of them.</p>' +
  '<a href="/search?q=beans&amp;page=2">Next page</a> <a href="/search?page=3&amp;q=peas">Peas, page 3</a>' +
  '<a href="/shop?id=7&amp;ref=list">Seeds</a></main></body></html>';

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-fetch-hostile-');
  ({ db, site } = store);
  // A CGI script or a hand-rolled server that sends no Content-Type at all.
  site.route('/cgi-bin/beans', (_req, res) => {
    res.removeHeader('content-type');
    res.writeHead(200).end(PAGE);
  });
  site.route('/cgi-bin/data', (_req, res) => res.writeHead(200).end('id,name\n1,runner bean\n'));
  // Every page of the members' area sends the visitor to the login form, each with its own `next`.
  for (const name of ['plot-12', 'plot-13']) {
    site.route(`/members/${name}`, (_req, res) =>
      res.writeHead(302, { location: `/login?next=%2Fmembers%2F${name}` }).end(),
    );
  }
  site.route('/login', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(LOGIN));
  site.route('/crawling-rules', (_req, res) => res.writeHead(301, { location: '/robots.txt' }).end());
  site.route('/latest', (_req, res) => res.writeHead(302, { location: '/files/seeds.zip' }).end());
  site.route('/files/seeds.zip', (_req, res) =>
    res.writeHead(200, { 'content-type': 'application/zip' }).end('PK\x03\x04'),
  );
  site.route('/robots.txt', (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end('User-agent: *\nDisallow: /private\nDisallow: /search?q=\nDisallow: /shop?id=\n'),
  );
  site.route('/find', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(SEARCH_LINKS));
}, 120_000);

afterAll(() => store?.close());

const spec = () => loopbackFetchSpec(site.url);

function fetchAndStore(pathAndQuery: string, depth: number) {
  const activity = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  return runAsActivity('fetchAndStore', () =>
    activity({ crawlId: 'c1', url: `${site.origin}${pathAndQuery}`, depth, spec: spec() }),
  );
}

async function storedUrls(): Promise<string[]> {
  const { rows } = await db.query<{ url: string }>('SELECT url FROM pages ORDER BY url');
  return rows.map((row) => row.url.slice(site.origin.length));
}

describe('fetchAndStore on odd servers', () => {
  it('stores a page sent without a Content-Type as HTML, with its links', async () => {
    const result = await fetchAndStore('/cgi-bin/beans', 1);
    expect(result).toMatchObject({ outcome: 'ok', linksStored: 1 });
    const { rows } = await db.query<{ content_type: string; title: string }>(
      'SELECT content_type, title FROM pages WHERE url = $1',
      [`${site.origin}/cgi-bin/beans`],
    );
    expect(rows[0]).toEqual({ content_type: 'text/html', title: 'Runner beans' });
    // Untyped bytes that do not open like HTML are still no page.
    expect(await fetchAndStore('/cgi-bin/data', 1)).toMatchObject({ outcome: 'unsupported-content-type' });
  });

  it('does not follow a discovered page into a login wall, but follows a seed there', async () => {
    for (const name of ['plot-12', 'plot-13']) {
      const result = await fetchAndStore(`/members/${name}`, 1);
      expect(result).toMatchObject({ outcome: 'redirect-limit' });
      expect(result.error).toContain(`/login?next=%2Fmembers%2F${name} not followed`);
    }
    expect(site.log.filter((entry) => entry.path.startsWith('/login'))).toEqual([]);
    expect(await storedUrls()).not.toContainEqual(expect.stringMatching(/^\/login/));
    // Nor into robots.txt, which is rules for crawlers, not a page to index.
    expect(await fetchAndStore('/crawling-rules', 1)).toMatchObject({ outcome: 'redirect-limit' });
    expect(await storedUrls()).not.toContain('/robots.txt');
    // A file is judged by its answer, as before: skipped for its type, not a failed redirect.
    expect(await fetchAndStore('/latest', 1)).toMatchObject({ outcome: 'unsupported-content-type' });
    // The user named this URL: it goes where the server sends it.
    expect(await fetchAndStore('/members/plot-12', 0)).toMatchObject({ outcome: 'ok' });
    expect(await storedUrls()).toContain('/login?next=%2Fmembers%2Fplot-12');
  });

  it('does not follow a link robots.txt refuses as written, in the canonical form it would allow', async () => {
    // Canonical forms sort the parameters: `/search?page=2&q=beans` and `/shop?id=7&ref=list`
    // (unchanged). robots.txt refuses `/search?q=beans&page=2` as the page wrote it.
    const result = await fetchAndStore('/find', 1);
    expect(result).toMatchObject({ outcome: 'ok' });
    const discovered = result.discovered.map((found) => found.url.slice(site.origin.length));
    expect(discovered).not.toContain('/search?page=2&q=beans');
    // Allowed as written (`/search?page=3…` is not `/search?q=…`): followed in its canonical form.
    expect(discovered).toContain('/search?page=3&q=peas');
    // A form robots.txt refuses either way is left to the fetch, which refuses it.
    expect(discovered).toContain('/shop?id=7&ref=list');
    expect(await fetchAndStore('/shop?id=7&ref=list', 2)).toMatchObject({ outcome: 'robots-blocked' });
  });
});
