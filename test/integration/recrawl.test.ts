/**
 * A recrawl on real parts (Temporal dev server, native Postgres + pgvector, in-process workers,
 * the provisioned embedding model) of a site served on 127.0.0.1 that answers revalidation with
 * 304. Between crawls k = 2 pages are edited, d = 2 deleted (404 and 410), one exact and one near
 * copy added. The server's own request log and the store then show what the recrawl did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { countPagesByType } from '../../report/pages-by-type';
import { pageHtml } from '../../testbed/generated-site';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type RequestLogEntry, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import { serveVersionedPages, type VersionedPages } from '../../testbed/versioned-site';
import type { CrawlSummary } from '../../workflows/messages';

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'te',
  'vo',
  'zi',
  'pa',
  'da',
  'fe',
  'go',
  'hu',
  'ji',
  'be',
];
const CONTENT_PAGES = 8;

/** Pseudo-prose of `count` words, distinct per seed, so no two pages are near copies by chance. */
function prose(seed: number, count: number): string[] {
  let x = seed * 7919 + 17;
  return Array.from({ length: count }, () => {
    let word = '';
    for (let s = 0; s < 3; s++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      word += SYLLABLES[(x >>> 16) % 16];
    }
    return word;
  });
}

/** A word only page i says, to find it with a search. */
const marker = (i: number) => `quux${'abcdefghij'[i]}marker`;
const path = (i: number) => `/p${i}.html`;

function contentPage(i: number, words: string[]): string {
  return pageHtml(`Page ${i}`, ['/'], `${marker(i)} ${words.join(' ')}`);
}

let stack: TestStack;
let site: SiteServer;
let pages: VersionedPages;
let sitemapPaths: string[] = [];
const bodies = new Map<number, string[]>();

beforeAll(async () => {
  site = await serveSite(undefined);
  pages = serveVersionedPages(site);
  pages.set(
    '/',
    pageHtml(
      'Index',
      Array.from({ length: CONTENT_PAGES }, (_, i) => path(i + 1)),
      'The index of the site.',
    ),
  );
  for (let i = 1; i <= CONTENT_PAGES; i++) {
    // Page 6 is long: the near copy of it is one word apart out of 1,000.
    bodies.set(i, prose(i, i === 6 ? 1000 : 300));
    pages.set(path(i), contentPage(i, bodies.get(i) as string[]));
  }
  sitemapPaths = pages.paths();
  site.route('/sitemap.xml', (_req, res) => {
    const urls = sitemapPaths.map((p) => `<url><loc>${site.origin}${p}</loc></url>`).join('');
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`,
      );
  });
  stack = await startTestStack();
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
});

async function crawl(crawlId: string, extra: Record<string, unknown> = {}): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'], ...extra }],
  });
}

/** Requests for pages (robots.txt and the sitemap left out) logged since `from`. */
function pageRequests(from: number): RequestLogEntry[] {
  return site.log
    .slice(from)
    .filter((entry) => entry.path !== '/robots.txt' && entry.path !== '/sitemap.xml');
}

async function search(query: string): Promise<string[]> {
  const result = await runGleaner(['search', query, '--json', '--k', '20', '--mode', 'fulltext'], {
    DATABASE_URL: stack.postgres.url,
  });
  expect(result.code, result.stderr).toBe(0);
  const hits = (JSON.parse(lastLine(result.stdout)) as { hits: Array<{ url: string }> }).hits;
  return [...new Set(hits.map((hit) => new URL(hit.url).pathname))];
}

async function extractedAt(): Promise<Map<string, string>> {
  const { rows } = await stack.db.query<{ url: string; at: string | null }>(
    'SELECT url, extracted_at::text AS at FROM pages',
  );
  return new Map(rows.map((row) => [new URL(row.url).pathname, row.at ?? '']));
}

describe('a crawl of known pages is a recrawl', () => {
  let first: CrawlSummary;

  it('first crawl: every page is new and embedded', async () => {
    first = await crawl('recrawl-1');
    expect(first.status).toBe('completed');
    expect(first.pagesNew).toBe(CONTENT_PAGES + 1);
    expect([first.pagesChanged, first.pagesUnchanged, first.pagesRemoved, first.pagesDuplicate]).toEqual([
      0, 0, 0, 0,
    ]);
    const chunks = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM chunks WHERE embedding IS NOT NULL',
    );
    expect(first.chunksEmbedded).toBe(chunks.rows[0]?.n);
    expect(first.chunksEmbedded).toBeGreaterThan(CONTENT_PAGES);
    expect(await search(marker(3))).toEqual([path(3)]);
  });

  it('second crawl: 304 for unchanged pages, only edits re-extracted and re-embedded, removals and copies kept out of search', async () => {
    // k = 2 edited, d = 2 deleted, one exact and one near copy (announced by the sitemap only).
    for (const i of [1, 2]) {
      const edited = [...(bodies.get(i) as string[]), ...prose(100 + i, 60)];
      pages.set(path(i), contentPage(i, edited));
    }
    pages.remove(path(3), 404);
    pages.remove(path(4), 410);
    pages.set('/copy-exact.html', pages.html(path(5)) as string);
    const near = [...(bodies.get(6) as string[])];
    near[500] = 'different';
    pages.set('/copy-near.html', contentPage(6, near));
    sitemapPaths = [...sitemapPaths, '/copy-exact.html', '/copy-near.html'];

    const before = await extractedAt();
    const startedAt = await stack.db.query<{ now: string }>('SELECT now()::text AS now');
    const logFrom = site.log.length;
    const summary = await crawl('recrawl-2');
    expect(summary.status).toBe('completed');

    // The server's own log: each page asked once; unchanged pages answered 304, edits in full.
    const requests = pageRequests(logFrom);
    const statusOf = new Map(requests.map((entry) => [entry.path, entry.status]));
    expect(requests.length).toBe(statusOf.size);
    const unchanged = ['/', path(5), path(6), path(7), path(8)];
    for (const p of unchanged) expect(statusOf.get(p), p).toBe(304);
    for (const p of [path(1), path(2), '/copy-exact.html', '/copy-near.html'])
      expect(statusOf.get(p), p).toBe(200);
    expect(statusOf.get(path(3))).toBe(404);
    expect(statusOf.get(path(4))).toBe(410);

    expect(summary.pagesUnchanged).toBe(unchanged.length);
    expect(summary.pagesChanged).toBe(2);
    expect(summary.pagesRemoved).toBe(2);
    expect(summary.pagesNew).toBe(2);
    expect(summary.pagesDuplicate).toBe(2);
    expect(summary.errors).toBe(0);
    // The pages by type the summary shows: every live page the recrawl visited, 304s included (before,
    // only the ones it stored a body for: 4 of 9).
    const byType = await countPagesByType(stack.db, 'recrawl-2');
    expect(byType).toEqual({ html: unchanged.length + 2 + 2 });

    // Only the edited pages (and the near copy, whose text decides it is one) were extracted again.
    const after = await extractedAt();
    const reextracted = [...after].filter(([p, at]) => at !== '' && at !== before.get(p)).map(([p]) => p);
    expect(reextracted.sort()).toEqual([path(1), path(2), '/copy-near.html'].sort());

    // chunksEmbedded counts exactly the vectors written by this crawl, all of them on edited pages.
    const embedded = await stack.db.query<{ url: string; n: number }>(
      `SELECT p.url, count(*)::int AS n FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE c.embedded_at >= $1::timestamptz GROUP BY p.url`,
      [startedAt.rows[0]?.now ?? null],
    );
    const embeddedPaths = embedded.rows.map((row) => new URL(row.url).pathname).sort();
    expect(embeddedPaths).toEqual([path(1), path(2)]);
    expect(summary.chunksEmbedded).toBe(embedded.rows.reduce((n, row) => n + row.n, 0));
    expect(summary.chunksEmbedded).toBeGreaterThan(0);
    expect(summary.chunksEmbedded).toBeLessThan(first.chunksEmbedded);

    // Deleted pages: tombstones with time and reason, no chunks, no outgoing edges, out of search.
    const tombstones = await stack.db.query<{ url: string; reason: string; chunks: number; links: number }>(
      `SELECT p.url, p.removed_reason AS reason,
              (SELECT count(*)::int FROM chunks c WHERE c.page_id = p.id) AS chunks,
              (SELECT count(*)::int FROM links l WHERE l.from_page_id = p.id) AS links
         FROM pages p WHERE p.removed_at IS NOT NULL ORDER BY p.url`,
    );
    expect(
      tombstones.rows.map((row) => [new URL(row.url).pathname, row.reason, row.chunks, row.links]),
    ).toEqual([
      [path(3), 'http-404', 0, 0],
      [path(4), 'http-410', 0, 0],
    ]);
    expect(await search(marker(3))).toEqual([]);
    expect(await search(marker(4))).toEqual([]);

    // Duplicates: one of each pair comes back from search; the copy records duplicate_of.
    expect(await search(marker(5))).toEqual([path(5)]);
    expect(await search(marker(6))).toEqual([path(6)]);
    const copies = await stack.db.query<{ url: string; kind: string; of: string }>(
      `SELECT p.url, p.duplicate_kind AS kind, o.url AS of FROM pages p JOIN pages o ON o.id = p.duplicate_of
        ORDER BY p.url`,
    );
    expect(copies.rows.map((row) => [new URL(row.url).pathname, row.kind, new URL(row.of).pathname])).toEqual(
      [
        ['/copy-exact.html', 'exact', path(5)],
        ['/copy-near.html', 'near', path(6)],
      ],
    );

    // Per-page change records; the copies answer but no page links to them.
    const changes = await stack.db.query<{ url: string; change: string; unlinked: boolean }>(
      `SELECT url, change, unlinked FROM page_changes WHERE crawl_id = 'recrawl-2' ORDER BY url`,
    );
    const byPath = new Map(changes.rows.map((row) => [new URL(row.url).pathname, row]));
    expect(byPath.get(path(1))?.change).toBe('changed');
    expect(byPath.get(path(3))?.change).toBe('removed');
    expect(byPath.get(path(7))?.change).toBe('unchanged');
    expect(byPath.get('/copy-near.html')?.change).toBe('new');
    expect(
      changes.rows
        .filter((row) => row.unlinked)
        .map((row) => new URL(row.url).pathname)
        .sort(),
    ).toEqual(['/copy-exact.html', '/copy-near.html']);
  });

  it('an unchanged page without a summary (indexed before summaries existed) gets one, and nothing is embedded again', async () => {
    const urls = [`${site.origin}${path(5)}`, `${site.origin}${path(8)}`];
    await stack.db.query(
      'DELETE FROM page_summaries WHERE page_id IN (SELECT id FROM pages WHERE url = ANY($1::text[]))',
      [urls],
    );
    const extracted = await extractedAt();
    const logFrom = site.log.length;
    const summary = await crawl('recrawl-backfill');
    expect(summary.status).toBe('completed');
    // Still answered 304: the backfill costs no download, no extraction and no vector.
    const requests = pageRequests(logFrom).filter(
      (entry) => entry.path === path(5) || entry.path === path(8),
    );
    expect(requests.map((entry) => entry.status)).toEqual([304, 304]);
    expect(summary.chunksEmbedded).toBe(0);
    // The copies found by the crawl before answer 304 too: unchanged pages, not duplicates found
    // again (they were counted twice, as unchanged and as duplicates).
    const copies = pageRequests(logFrom).filter((entry) => entry.path.startsWith('/copy-'));
    expect(copies.map((entry) => entry.status)).toEqual([304, 304]);
    expect(summary.pagesDuplicate).toBe(0);
    const known = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pages');
    expect(summary.pagesUnchanged).toBe(known.rows[0]?.n);
    const after = await extractedAt();
    for (const p of [path(5), path(8)]) expect(after.get(p)).toBe(extracted.get(p));
    const summarized = await stack.db.query<{ url: string; tags: string[] }>(
      `SELECT p.url, s.tags FROM pages p JOIN page_summaries s ON s.page_id = p.id AND s.source_hash = p.extracted_hash
        WHERE p.url = ANY($1::text[]) ORDER BY p.url`,
      [urls],
    );
    expect(summarized.rows.map((row) => row.url)).toEqual([...urls].sort());
    for (const row of summarized.rows) expect(row.tags.length).toBeGreaterThan(0);
  });

  it('--only-due visits due pages first and skips the rest; a page that comes back is indexed again', async () => {
    pages.set(path(3), contentPage(3, bodies.get(3) as string[]));
    await stack.db.query(
      `UPDATE pages SET next_visit_at = now() - interval '1 hour' WHERE url = ANY($1::text[])`,
      [[`${site.origin}${path(3)}`, `${site.origin}${path(7)}`]],
    );
    const logFrom = site.log.length;
    const summary = await crawl('recrawl-3', { onlyDue: true });
    expect(summary.status).toBe('completed');
    const requests = pageRequests(logFrom).map((entry) => entry.path);
    // The two due pages first (the seed is always visited), nothing else.
    expect(requests.slice(0, 2).sort()).toEqual([path(3), path(7)]);
    expect(requests.slice(2)).toEqual(['/']);
    expect(summary.pagesChanged).toBe(1);
    expect(summary.pagesUnchanged).toBe(2);
    expect(await search(marker(3))).toEqual([path(3)]);
    const back = await stack.db.query<{ removed: boolean; next: boolean }>(
      `SELECT removed_at IS NOT NULL AS removed, next_visit_at > now() AS next FROM pages WHERE url = $1`,
      [`${site.origin}${path(3)}`],
    );
    expect(back.rows[0]).toEqual({ removed: false, next: true });
  });
});
