/**
 * The fetch activity against odd servers, with a real PGlite store and a loopback site: a page sent
 * without a Content-Type is stored as the page it is, and a redirect to where no link would be
 * followed (a login wall, robots.txt) is not followed from a discovered page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import { closePageAnalysisPool } from '../../activities/page-analysis-pool';
import { createRobotsPolicy } from '../../activities/robots-policy';
import type { FetchSpec } from '../../activities/types';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { runAsActivity } from '../../testbed/activity-context';
import { type SiteServer, serveSite } from '../../testbed/site-server';

let dir: string;
let db: PgliteDatabase;
let site: SiteServer;

const PAGE =
  '<!DOCTYPE html><html><head><title>Runner beans</title></head><body><main><h1>Runner beans</h1>' +
  '<p>Runner beans climb any pole you give them and crop from July until the first frost.</p>' +
  '<a href="/sowing">Sowing</a></main></body></html>';
const LOGIN =
  '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form><input name="user">' +
  '<input name="password" type="password"><button>Sign in</button></form></body></html>';

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-fetch-hostile-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
  site = await serveSite(undefined);
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
    res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
  );
}, 120_000);

afterAll(async () => {
  await closePageAnalysisPool();
  await site?.close();
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const spec = (): FetchSpec => ({
  scope: 'same-origin',
  seeds: [site.url],
  domains: [],
  includePrefixes: [],
  exclude: [],
  maxDepth: 5,
  userAgent: 'gleaner-test',
  allowHosts: ['127.0.0.1'],
  maxBodyBytes: 10 * 1024 * 1024,
  maxRedirects: 5,
});

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
});
