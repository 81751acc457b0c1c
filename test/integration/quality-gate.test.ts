/**
 * The quality gate and language end to end (issue 27 items 3 and 4), as a user meets them:
 * `gleaner crawl --lang en --json` on the embedded default (its own Temporal dev server and PGlite)
 * against a site served on 127.0.0.1, then `gleaner search` with and without `--include-flagged`.
 * The server's own request log and the store show what was fetched and what was indexed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeUrl } from '../../activities/soft-404-probe';
import { PgliteDatabase } from '../../db/pglite-database';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const CRAWL_ID = 'quality-gate-1';
/** What this site answers for any path it does not have: a 200 page with no "not found" in its title. */
const SITE_FALLBACK =
  '<main><h1>Garden notes</h1><p>We looked everywhere in the garden shed for that one and came back with an empty ' +
  'trug. Try the seasonal index, or browse the beds by month, from the first sowings of March to the last ' +
  'lifting of leeks in December.</p></main>';
const METADATA_URL = 'http://169.254.169.254/latest/meta-data/';
let site: SiteServer;
let home: string;

const html = (title: string, body: string, lang = 'en') =>
  `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const TOMATOES =
  '<main><h1>Growing tomatoes under glass</h1><p>Greenhouse tomatoes want steady warmth, a long season and water ' +
  'given at the roots early in the day. Pinch out the side shoots every week and tie the main stem to a cane as it ' +
  'climbs. The quartzbellow variety ripens first when the nights stay above twelve degrees.</p>' +
  '<p>Feed with a high potash liquid once the first truss has set, and ventilate on warm afternoons so the flowers ' +
  'stay dry and pollinate well.</p></main>';
const BEANS =
  '<main><h1>Runner beans</h1><p>Runner beans climb fast on a wigwam of hazel poles and crop from midsummer until the ' +
  'first frost. Pick the pods young and often, because a plant left to set seed stops flowering within days. ' +
  'Mulch the roots deeply in dry spells.</p></main>';
const NOT_FOUND =
  '<main><h1>Oops</h1><p>Sorry, the page you were looking for could not be found. It may have been moved or ' +
  'deleted; the zanzibarquux archive lists what remains.</p></main>';
const GERMAN =
  '<main><h1>Tomaten im Gewächshaus</h1><p>Tomaten im Gewächshaus brauchen gleichmäßige Wärme, eine lange Saison und ' +
  'Wasser, das früh am Tag an die Wurzeln gegeben wird. Geizen Sie die Seitentriebe jede Woche aus und binden Sie den ' +
  'Haupttrieb an einen Stab, während er wächst. Düngen Sie mit einem kaliumreichen Flüssigdünger, sobald der erste ' +
  'Fruchtstand angesetzt hat, und lüften Sie an warmen Nachmittagen.</p></main>';
const FRENCH =
  '<main><h1>Tomates sous serre</h1><p>Les tomates sous serre demandent une chaleur régulière, une longue saison et ' +
  "de l'eau donnée aux racines tôt dans la journée.</p></main>";
const stub = (target: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta http-equiv="refresh" content="0;URL=${target}"><title>Redirection</title></head>` +
  `<body><p>Redirecting to <a href="${target}">${target}</a>...</p>` +
  `<script>location.replace("${target}" + location.search + location.hash);</script></body></html>`;

beforeAll(async () => {
  site = await serveSite(undefined);
  const page = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  site.route(
    '/',
    page(
      html(
        'Garden notes',
        '<main><h1>Garden notes</h1><p>Notes from a small kitchen garden: what grew, what failed and what we would ' +
          'plant again next spring, written up at the end of every season.</p><ul>' +
          '<li><a href="/tomatoes.html">Tomatoes</a></li><li><a href="/old-tomatoes.html">Tomatoes (old address)</a></li>' +
          '<li><a href="/moved.html">Beans (moved)</a></li><li><a href="/missing.html">Archive</a></li>' +
          '<li><a href="/empty.html">Peppers</a></li><li><a href="/old-bed.html">Old bed</a></li>' +
          '<li><a href="/offsite-stub.html">Elsewhere</a></li><li><a href="/private-stub.html">Internal</a></li>' +
          '<li><a href="/de/tomaten.html">Tomaten</a></li><li><a href="/fr/tomates.html" hreflang="fr">Français</a></li>' +
          '</ul></main>',
      ),
    ),
  );
  site.route('/tomatoes.html', page(html('Growing tomatoes', TOMATOES)));
  site.route('/beans.html', page(html('Runner beans', BEANS)));
  site.route('/missing.html', page(html('Page not found', NOT_FOUND)));
  // The probe's path (fixed by the crawl id) and a linked page get the site's fallback answer.
  site.route(new URL(probeUrl(CRAWL_ID, site.origin)).pathname, page(html('Garden notes', SITE_FALLBACK)));
  site.route('/old-bed.html', page(html('Garden notes', SITE_FALLBACK)));
  site.route('/empty.html', page(html('Peppers', '<main><h1>Peppers</h1><p>Coming soon.</p></main>')));
  site.route('/de/tomaten.html', page(html('Tomaten', GERMAN, 'de')));
  site.route('/fr/tomates.html', page(html('Tomates', FRENCH, 'fr')));
  site.route('/old-tomatoes.html', page(stub('/tomatoes.html')));
  site.route(
    '/moved.html',
    page('<html><body><p>Moved.</p><script>window.location.href = "/beans.html";</script></body></html>'),
  );
  site.route('/offsite-stub.html', page(stub('http://example.com/elsewhere.html')));
  // In scope by --domain, but a link-local metadata address the SSRF guard refuses before any
  // connection: the stub's target is claimed like any URL and never fetched.
  site.route('/private-stub.html', page(stub(METADATA_URL)));
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-quality-'));
});

afterAll(async () => {
  await site?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

interface SearchHitJson {
  url: string;
}

async function searchUrls(args: string[]): Promise<string[]> {
  const result = await runGleaner(['search', ...args, '--k', '20', '--json'], { GLEANER_HOME: home });
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout).hits as SearchHitJson[]).map((hit) => new URL(hit.url).pathname);
}

describe('the quality gate on a served site', () => {
  it('flags soft-404, near-empty and wrong-language pages, follows stubs as redirects, and leaves flagged pages out of search', async () => {
    const crawl = await runGleaner(
      [
        'crawl',
        site.url,
        '--allow-host',
        '127.0.0.1',
        '--scope',
        'domains',
        '--domain',
        '127.0.0.1',
        '--domain',
        '169.254.169.254',
        '--delay-ms',
        '50',
        '--lang',
        'en',
        '--soft-404-probe',
        '--crawl-id',
        CRAWL_ID,
        '--wait',
        '--json',
      ],
      { GLEANER_HOME: home },
    );
    expect(crawl.code, crawl.stderr).toBe(0);
    const summary = JSON.parse(crawl.stdout);
    expect(summary.status).toBe('completed');

    const requested = site.log.map((entry) => entry.path);
    // hreflang="fr" is an alternate in a language the crawl does not keep: not followed.
    expect(requested).not.toContain('/fr/tomates.html');
    // The stubs' targets are fetched once each, as pages.
    expect(requested.filter((p) => p === '/tomatoes.html')).toHaveLength(1);
    expect(requested.filter((p) => p === '/beans.html')).toHaveLength(1);
    // The probe: one request to the origin, for a path it cannot have.
    expect(requested.filter((p) => p.startsWith('/gleaner-soft-404-probe-'))).toHaveLength(1);

    const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
    try {
      const pages = await db.query<{
        path: string;
        flags: string[];
        flag_reasons: Record<string, string> | null;
        language_declared: string | null;
        language_detected: string | null;
        chunks: string;
      }>(
        `SELECT p.url AS path, p.flags, p.flag_reasons, p.language_declared, p.language_detected,
                (SELECT count(*) FROM chunks c WHERE c.page_id = p.id)::text AS chunks
           FROM pages p ORDER BY p.url`,
      );
      const byPath = new Map(pages.rows.map((row) => [new URL(row.path).pathname, row]));
      // Stubs are hops, not pages.
      expect([...byPath.keys()].sort()).toEqual(
        [
          '/',
          '/beans.html',
          '/de/tomaten.html',
          '/empty.html',
          '/missing.html',
          '/old-bed.html',
          '/tomatoes.html',
        ].sort(),
      );
      expect(byPath.get('/missing.html')?.flags).toEqual(['soft-404']);
      expect(byPath.get('/missing.html')?.flag_reasons?.['soft-404']).toMatch(/title says not found/);
      expect(byPath.get('/empty.html')?.flags).toEqual(['near-empty']);
      // Its title says nothing, but it reads like the origin's answer to a path that cannot exist.
      expect(byPath.get('/old-bed.html')?.flags).toEqual(['soft-404']);
      expect(byPath.get('/old-bed.html')?.flag_reasons?.['soft-404']).toMatch(
        /answer to a path that cannot exist/,
      );
      const probes = await db.query<{ status: number }>(
        'SELECT status FROM origin_probes WHERE crawl_id = $1',
        [CRAWL_ID],
      );
      expect(probes.rows.map((row) => row.status)).toContain(200);
      expect(byPath.get('/de/tomaten.html')?.flags).toEqual(['wrong-language']);
      expect(byPath.get('/de/tomaten.html')?.flag_reasons?.['wrong-language']).toMatch(
        /detected de .*allowed: en/,
      );
      expect(byPath.get('/de/tomaten.html')).toMatchObject({
        language_declared: 'de',
        language_detected: 'de',
      });
      for (const ok of ['/', '/tomatoes.html', '/beans.html']) expect(byPath.get(ok)?.flags).toEqual([]);
      expect(byPath.get('/tomatoes.html')?.language_detected).toBe('en');
      // Flagged pages are kept, chunks and all: never silently dropped.
      expect(Number(byPath.get('/missing.html')?.chunks)).toBeGreaterThan(0);

      expect(summary.pagesFlagged).toEqual({ 'near-empty': 1, 'soft-404': 2, 'wrong-language': 1 });

      const stubs = await db.query<{ url: string; final_url: string; error: string }>(
        `SELECT url, final_url, error FROM fetches WHERE outcome = 'redirect-stub' ORDER BY url`,
      );
      expect(stubs.rows.map((row) => [new URL(row.url).pathname, row.final_url])).toEqual([
        ['/moved.html', `${site.origin}/beans.html`],
        ['/offsite-stub.html', 'http://example.com/elsewhere.html'],
        ['/old-tomatoes.html', `${site.origin}/tomatoes.html`],
        ['/private-stub.html', METADATA_URL],
      ]);
      expect(stubs.rows.find((row) => row.url.endsWith('/offsite-stub.html'))?.error).toMatch(/out of scope/);
      // The private target went through the normal path and the SSRF guard: nothing was fetched from it.
      const privateFetches = await db.query<{ outcome: string }>(
        `SELECT outcome FROM fetches WHERE url LIKE 'http://169.254.169.254%' AND outcome <> 'redirect-stub'`,
      );
      expect(privateFetches.rows.length).toBeGreaterThan(0);
      expect(privateFetches.rows.filter((row) => row.outcome === 'ok')).toEqual([]);
      const privatePages = await db.query(`SELECT 1 FROM pages WHERE origin = 'http://169.254.169.254'`);
      expect(privatePages.rows).toEqual([]);
      const flaggedEvents = await db.query<{ url: string }>(
        `SELECT url FROM change_events WHERE kind = 'flagged' ORDER BY url`,
      );
      expect(flaggedEvents.rows.map((row) => new URL(row.url).pathname)).toEqual([
        '/de/tomaten.html',
        '/empty.html',
        '/missing.html',
        '/old-bed.html',
      ]);
    } finally {
      await db.close();
    }

    const plain = await searchUrls(['zanzibarquux archive, tomatoes in the greenhouse']);
    expect(plain).toContain('/tomatoes.html');
    expect(plain).not.toContain('/missing.html');
    expect(plain).not.toContain('/de/tomaten.html');
    const all = await searchUrls(['zanzibarquux archive, tomatoes in the greenhouse', '--include-flagged']);
    expect(all).toContain('/missing.html');
    expect(all).toContain('/de/tomaten.html');
    const german = await searchUrls(['Tomaten im Gewächshaus', '--include-flagged', '--lang', 'de']);
    expect(german).toEqual(['/de/tomaten.html']);

    // gleaner report counts the store's flagged pages by flag, with each sample's reason.
    const report = await runGleaner(['report', '--json'], { GLEANER_HOME: home });
    const flaggedPages = JSON.parse(report.stdout).flaggedPages;
    expect(flaggedPages.byFlag).toEqual({ 'near-empty': 1, 'soft-404': 2, 'wrong-language': 1 });
    expect(flaggedPages.samples).toContainEqual({
      flag: 'wrong-language',
      url: `${site.origin}/de/tomaten.html`,
      reason: expect.stringMatching(/detected de/),
    });
    const text = await runGleaner(['report'], { GLEANER_HOME: home });
    expect(text.stdout).toMatch(/Flagged pages .*\n {2}near-empty: 1\n/);
  }, 420_000);

  it('refuses a --lang that names no language, with exit 2', async () => {
    const crawl = await runGleaner(['crawl', site.url, '--lang', 'english', '--json'], {
      GLEANER_HOME: home,
    });
    expect(crawl.code).toBe(2);
    expect(lastLine(crawl.stderr)).toBe(
      'gleaner: --lang: "english" is not a language code (use ISO 639-1, e.g. en,de)',
    );
    const search = await runGleaner(['search', 'tomatoes', '--lang', 'xx'], { GLEANER_HOME: home });
    expect(search.code).toBe(2);
    expect(lastLine(search.stderr)).toMatch(/lang: the language detector cannot recognise "xx"/);
  });
});
