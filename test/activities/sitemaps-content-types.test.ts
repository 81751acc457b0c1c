/**
 * Sitemaps under the types scripts send them with, read by the sitemap activity's core against a real
 * PGlite store and a loopback site: a sitemap robots.txt names is read whether it comes as
 * `text/html` (a `sitemap.php`) or with no Content-Type at all; the guessed `/sitemap.xml` answered by
 * an HTML page is still passed over quietly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRobotsPolicy } from '../../activities/robots-policy';
import { ingestSitemapsCore } from '../../activities/sitemaps';
import type { PgliteDatabase } from '../../db/pglite-database';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../testbed/loopback-store';
import type { SiteServer } from '../../testbed/site-server';

let store: LoopbackStore;
let db: PgliteDatabase;
let site: SiteServer;

const urlset = (paths: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths
    .map((p) => `<url><loc>${site.origin}${p}</loc></url>`)
    .join('')}</urlset>`;

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-sitemap-types-');
  ({ db, site } = store);
  site.route('/robots.txt', (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end('User-agent: *\nAllow: /\n\nSitemap: /sitemap.php\nSitemap: /sitemap-feed\n'),
  );
  // PHP's default type, as a hand-written sitemap script leaves it.
  site.route('/sitemap.php', (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8' }).end(urlset(['/beans', '/peas'])),
  );
  site.route('/sitemap-feed', (_req, res) => {
    res.removeHeader('content-type');
    res.writeHead(200).end(urlset(['/onions']));
  });
  // The guessed location, answered by the site's not-found page with a 200.
  site.route('/sitemap.xml', (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<!DOCTYPE html><html><body><h1>Nothing here</h1><a href="${site.origin}/leeks">Leeks</a></body></html>`,
      ),
  );
}, 120_000);

afterAll(() => store?.close());

describe('sitemaps and their content types', () => {
  it('reads a named sitemap sent as text/html or untyped, and passes over a guessed HTML page', async () => {
    const result = await ingestSitemapsCore(
      { db, robots: createRobotsPolicy({ db }) },
      { crawlId: 'c1', origin: site.origin, spec: loopbackFetchSpec(site.url), delayMs: 0 },
      { heartbeat: () => {} },
    );
    expect(result.errors).toEqual([]);
    expect(result.sitemapsFetched).toBe(2);
    const { rows } = await db.query<{ url: string }>(
      `SELECT url FROM crawl_urls WHERE crawl_id = 'c1' AND source = 'sitemap' ORDER BY url`,
    );
    expect(rows.map((row) => row.url.slice(site.origin.length))).toEqual(['/beans', '/onions', '/peas']);
  });
});
