/**
 * Sitemap ingestion against a real Postgres and real HTTP servers on loopback: robots.txt
 * `Sitemap:` lines and /sitemap.xml, an index pointing at a gzip file and a plain one, scope and
 * filters applied, claims idempotent, paging in priority order, and oversize files cut.
 * `@temporalio/testing` is not installed, so the activity's I/O core is called directly.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRobotsPolicy, type RobotsPolicy } from '../../activities/robots-policy';
import { ingestSitemapsCore, nextClaimedUrlsCore } from '../../activities/sitemaps';
import type { FetchSpec, IngestSitemapsInput } from '../../activities/types';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import { type SiteServer, serveSite } from '../../testbed/site-server';

let postgres: NativePostgres;
let db: PgDatabase;
let robots: RobotsPolicy;
let site: SiteServer;
let bombs: SiteServer;

const urlset = (entries: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries.join('\n')}</urlset>`;
const url = (loc: string, extra = '') => `<url><loc>${loc}</loc>${extra}</url>`;

function specFor(server: SiteServer, overrides: Partial<FetchSpec> = {}): FetchSpec {
  return {
    scope: 'same-origin',
    seeds: [server.url],
    domains: [],
    includePrefixes: [],
    exclude: ['*/drafts/*'],
    maxDepth: 5,
    userAgent: 'gleaner-test/1.0 (+https://example.invalid)',
    allowHosts: ['127.0.0.1'],
    maxBodyBytes: 10 * 1024 * 1024,
    maxRedirects: 5,
    ...overrides,
  };
}

beforeAll(async () => {
  postgres = await startNativePostgres();
  db = new PgDatabase(postgres.url);
  await migrate(db);
  robots = createRobotsPolicy({ db });
  site = await serveSite(undefined);
  bombs = await serveSite(undefined);
  const o = site.origin;

  site.route('/robots.txt', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nDisallow: /private/\n\nSitemap: ${o}/sitemap.xml\n`);
  });
  site.route('/sitemap.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' }).end(
      `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>${o}/sitemap-1.xml.gz</loc></sitemap>
        <sitemap><loc>/sitemap-2.xml</loc><lastmod>2024-01-01</lastmod></sitemap>
        <sitemap><loc>${o}/private/sitemap.xml</loc></sitemap>
        <sitemap><loc>http://elsewhere.invalid/sitemap.xml</loc></sitemap>
        <sitemap><loc>${o}/sitemap.xml</loc></sitemap>
      </sitemapindex>`,
    );
  });
  // A .gz file served as application/gzip, no Content-Encoding: the body itself is gzip.
  const first = urlset([
    url(`${o}/docs/a.html`, '<priority>0.9</priority><lastmod>2024-03-01</lastmod>'),
    url(`${o}/docs/b.html`, '<priority>0.9</priority><lastmod>2024-05-01</lastmod>'),
    url(`${o}/docs/c.html`, '<priority>0.2</priority>'),
    url(`${o}/docs/d.html`),
    // Not a page (a PDF is one now, when the crawl fetches PDFs: documents are pages).
    url(`${o}/files/report.zip`, '<priority>1.0</priority>'),
    url(`${o}/login`),
    url(`${o}/drafts/x.html`),
    url(`${o}/a/a/a/a/a/`),
    url('http://elsewhere.invalid/page.html'),
    url(`${o}/docs/e.html?utm_source=sitemap`, '<priority>bogus</priority><lastmod>2024-02-01</lastmod>'),
  ]);
  site.route('/sitemap-1.xml.gz', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(first));
  });
  // A plain sitemap sent with a transport Content-Encoding, repeating one URL of the first.
  const second = urlset([
    url(`${o}/docs/a.html`, '<priority>0.1</priority>'),
    url(`${o}/guide/`, '<priority>0.9</priority><lastmod>2024-05-01T12:00:00Z</lastmod>'),
    url(`${o}/guide/intro.html`, '<priority>0.5</priority>'),
    url(`${o}/seen-before.html`, '<priority>1.0</priority>'),
  ]);
  site.route('/sitemap-2.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/xml', 'content-encoding': 'gzip' }).end(gzipSync(second));
  });
  site.route('/extra.txt', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`${o}/text/one.html\n${o}/text/two.html\nnot-a-url\n`);
  });

  const b = bombs.origin;
  // 2 URLs, then 60 MB of whitespace: about 60 kB on the wire.
  const bomb = gzipSync(
    Buffer.concat([
      Buffer.from(`<urlset>${url(`${b}/before-1.html`)}${url(`${b}/before-2.html`)}`),
      Buffer.alloc(60 * 1024 * 1024, 0x20),
      Buffer.from(`${url(`${b}/after.html`)}</urlset>`),
    ]),
  );
  bombs.route('/sitemap.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bomb);
  });
  bombs.route('/huge.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml', 'content-length': String(60 * 1024 * 1024) });
    res.write('<urlset>');
  });
});

afterAll(async () => {
  await site?.close();
  await bombs?.close();
  await db?.close();
  await postgres?.stop();
});

describe('ingestSitemaps', () => {
  const crawlId = 'sitemap-lab';
  const input = (): IngestSitemapsInput => ({
    crawlId,
    origin: site.origin,
    sitemapUrls: [`${site.origin}/extra.txt`],
    spec: specFor(site),
    delayMs: 100,
  });

  it('claims in-scope page URLs from robots, /sitemap.xml, indexes, gzip and text sitemaps', async () => {
    // Claimed earlier from a page's links: the sitemap must not take it over.
    await db.query(
      `INSERT INTO crawl_urls (crawl_id, url, origin, depth, discovered_from) VALUES ($1, $2, $3, 1, $4)`,
      [crawlId, `${site.origin}/seen-before.html`, site.origin, site.url],
    );
    let beats = 0;
    const result = await ingestSitemapsCore({ db, robots }, input(), { heartbeat: () => beats++ });

    expect(result).toMatchObject({
      sitemapsFetched: 4, // sitemap.xml, sitemap-1.xml.gz, sitemap-2.xml, extra.txt
      urlsSeen: 10 + 4 + 2,
      // a, b, c, d, e from the first; guide/, guide/intro.html from the second; two text URLs.
      urlsClaimed: 9,
      claimedTotal: 9,
      truncated: false,
    });
    expect(result.errors).toHaveLength(2);
    expect(result.errors.join('\n')).toMatch(/private\/sitemap\.xml is disallowed by robots\.txt/);
    expect(result.errors.join('\n')).toMatch(
      /elsewhere\.invalid\/sitemap\.xml is off-origin and out of scope/,
    );
    expect(beats).toBeGreaterThan(0);

    // Each sitemap requested once, robots.txt first, requests spaced by delayMs.
    const paths = site.log.map((entry) => entry.path);
    expect(paths).toEqual([
      '/robots.txt',
      '/sitemap.xml',
      '/extra.txt',
      '/sitemap-1.xml.gz',
      '/sitemap-2.xml',
    ]);
    const requests = site.log.slice(1);
    for (let i = 1; i < requests.length; i++) {
      expect((requests[i]?.startedAtMs ?? 0) - (requests[i - 1]?.endedAtMs ?? 0)).toBeGreaterThanOrEqual(95);
    }

    const rows = await db.query<{
      url: string;
      depth: number;
      discovered_from: string;
      priority: number | null;
      lastmod: Date | null;
    }>(
      `SELECT url, depth, discovered_from, priority, lastmod FROM crawl_urls WHERE crawl_id = $1 AND source = 'sitemap' ORDER BY url`,
      [crawlId],
    );
    const o = site.origin;
    expect(rows.rows.map((row) => row.url)).toEqual(
      [
        '/docs/a.html',
        '/docs/b.html',
        '/docs/c.html',
        '/docs/d.html',
        '/docs/e.html',
        '/guide/',
        '/guide/intro.html',
        '/text/one.html',
        '/text/two.html',
      ].map((p) => `${o}${p}`),
    );
    expect(rows.rows.every((row) => row.depth === 1)).toBe(true);
    const a = rows.rows.find((row) => row.url.endsWith('/docs/a.html'));
    // The first sitemap to list a URL claims it, with its hints.
    expect(a?.discovered_from).toBe(`sitemap:${o}/sitemap-1.xml.gz`);
    expect(a?.priority).toBeCloseTo(0.9);
    expect(a?.lastmod?.toISOString()).toBe('2024-03-01T00:00:00.000Z');
    const e = rows.rows.find((row) => row.url.endsWith('/docs/e.html'));
    expect(e?.priority).toBeNull();

    const fetches = await db.query<{ outcome: string }>(
      `SELECT outcome FROM fetches WHERE crawl_id = $1 ORDER BY id`,
      [crawlId],
    );
    expect(fetches.rows.map((row) => row.outcome)).toEqual(Array(4).fill('sitemap-ok'));
  });

  it('claims nothing new on a second run', async () => {
    const result = await ingestSitemapsCore(
      { db, robots },
      { ...input(), delayMs: 0 },
      { heartbeat: () => {} },
    );
    expect(result).toMatchObject({ sitemapsFetched: 4, urlsClaimed: 0, claimedTotal: 9 });
  });

  it('pages through the claims in priority, then lastmod, then url order', async () => {
    const o = site.origin;
    const seen: string[] = [];
    let afterUrl: string | undefined;
    for (let calls = 0; calls < 10; calls++) {
      const page = await nextClaimedUrlsCore(db, {
        crawlId,
        origin: o,
        limit: 4,
        source: 'sitemap',
        ...(afterUrl ? { afterUrl } : {}),
      });
      expect(page.items.length).toBeLessThanOrEqual(4);
      expect(page.items.every((item) => item.depth === 1)).toBe(true);
      seen.push(...page.items.map((item) => item.url));
      afterUrl = page.lastUrl ?? afterUrl;
      if (page.done) break;
    }
    expect(seen).toEqual(
      [
        '/guide/', // 0.9, 2024-05-01T12:00
        '/docs/b.html', // 0.9, 2024-05-01T00:00
        '/docs/a.html', // 0.9, 2024-03-01
        '/guide/intro.html', // 0.5
        '/docs/c.html', // 0.2
        '/docs/e.html', // no priority, 2024-02-01
        '/docs/d.html', // no priority, no lastmod
        '/text/one.html',
        '/text/two.html',
      ].map((p) => `${o}${p}`),
    );
  });

  it('takes no sitemap URLs when the crawl is limited to its seeds', async () => {
    const result = await ingestSitemapsCore(
      { db, robots },
      { ...input(), crawlId: 'seeds-only', spec: specFor(site, { maxDepth: 0 }) },
      { heartbeat: () => {} },
    );
    expect(result).toMatchObject({ sitemapsFetched: 0, urlsClaimed: 0 });
  });

  it('stops at maxUrlsPerOrigin and maxSitemaps', async () => {
    const capped = await ingestSitemapsCore(
      { db, robots },
      { ...input(), crawlId: 'capped', maxUrlsPerOrigin: 3, delayMs: 0 },
      { heartbeat: () => {} },
    );
    expect(capped).toMatchObject({ urlsClaimed: 3, claimedTotal: 3, truncated: true });
    const few = await ingestSitemapsCore(
      { db, robots },
      { ...input(), crawlId: 'few', maxSitemaps: 2, delayMs: 0 },
      { heartbeat: () => {} },
    );
    expect(few).toMatchObject({ sitemapsFetched: 2, truncated: true });
  });

  it('cuts a gzip bomb at 50 MB and an oversize sitemap at the wire, with errors, keeping what came before', async () => {
    const rssBefore = process.memoryUsage().rss;
    const result = await ingestSitemapsCore(
      { db, robots },
      {
        crawlId: 'bombs',
        origin: bombs.origin,
        sitemapUrls: [`${bombs.origin}/huge.xml`],
        spec: specFor(bombs),
        delayMs: 0,
      },
      { heartbeat: () => {} },
    );
    expect(result.truncated).toBe(true);
    expect(result.urlsClaimed).toBe(2);
    expect(result.errors).toHaveLength(2);
    expect(result.errors.join('\n')).toMatch(/huge\.xml: body larger than 52428800 bytes/);
    expect(result.errors.join('\n')).toMatch(/sitemap\.xml: larger than 52428800 bytes after gunzip/);
    // Streamed: memory grows by far less than the 60 MB the bomb expands to (twice that as a string).
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
    const page = await nextClaimedUrlsCore(db, {
      crawlId: 'bombs',
      origin: bombs.origin,
      limit: 10,
      source: 'sitemap',
    });
    expect(page.items.map((item) => new URL(item.url).pathname)).toEqual([
      '/before-1.html',
      '/before-2.html',
    ]);
    expect(page.done).toBe(true);
  });

  it('rejects bad input before any request', async () => {
    const before = site.log.length;
    await expect(
      ingestSitemapsCore({ db, robots }, { ...input(), origin: 'ftp://nope' }, { heartbeat: () => {} }),
    ).rejects.toThrow(/origin "ftp:\/\/nope" is not an http\(s\) origin/);
    await expect(
      nextClaimedUrlsCore(db, { crawlId, origin: site.origin, limit: 501, source: 'sitemap' }),
    ).rejects.toThrow(/limit must be/);
    expect(site.log.length).toBe(before);
  });
});
