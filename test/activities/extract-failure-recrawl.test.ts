/**
 * A page whose analysis failed for good (past its deadline) on a recrawl, against a real PGlite
 * store and a loopback site that answers revalidation with 304: the same body is not analysed again
 * (no page stage for it, and a page stage that gets it anyway fails it at once), a failure is written
 * to the fetch log of the crawl whose page stage met it, and a changed body is analysed again.
 * The analysis is injected: it counts its calls and stands in for a document that outruns its
 * deadline, so the test costs no deadline of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import type { PageAnalysisInput } from '../../activities/page-analysis';
import { analysePageInThread } from '../../activities/page-analysis-pool';
import { createPageBatchActivities } from '../../activities/page-batches';
import { createPageContent } from '../../activities/page-content';
import { createRobotsPolicy } from '../../activities/robots-policy';
import { ThreadDeadlineError } from '../../activities/thread-deadline';
import type { FetchAndStoreResult } from '../../activities/types';
import type { PgliteDatabase } from '../../db/pglite-database';
import { needsPageWorkflow } from '../../domain/origin-stats';
import { failuresByReason } from '../../report/crawl-report';
import { runAsActivity } from '../../testbed/activity-context';
import { pageHtml } from '../../testbed/generated-site';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../testbed/loopback-store';
import type { SiteServer } from '../../testbed/site-server';
import { serveVersionedPages, type VersionedPages } from '../../testbed/versioned-site';

const DEADLINE_MS = 30_000;

let store: LoopbackStore;
let db: PgliteDatabase;
let site: SiteServer;
let pages: VersionedPages;

/** Paths whose analysis outruns its deadline, and every analysis asked for, by path. */
const slow = new Set<string>();
const analysed: string[] = [];

async function analyse(input: PageAnalysisInput, options: Parameters<typeof analysePageInThread>[1]) {
  const pathname = new URL(input.url).pathname;
  analysed.push(pathname);
  if (slow.has(pathname)) throw new ThreadDeadlineError(DEADLINE_MS, `analysing ${input.url}`);
  return analysePageInThread(input, options);
}

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-extract-failure-');
  ({ db, site } = store);
  pages = serveVersionedPages(site);
}, 120_000);

afterAll(() => store?.close());

const spec = () => loopbackFetchSpec(site.url);

function activities() {
  const content = createPageContent({ db, analyse });
  return createPageBatchActivities({ db, ...content, summarizePage: async () => ({}) });
}

/** One crawl's fetch stage over `paths`, then its page stage for the pages that need one. */
async function crawl(crawlId: string, paths: string[]) {
  const fetchAndStore = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  const fetched = new Map<string, FetchAndStoreResult>();
  for (const p of paths) {
    fetched.set(
      p,
      await runAsActivity('fetchAndStore', () =>
        fetchAndStore({ crawlId, url: `${site.origin}${p}`, depth: 0, spec: spec() }),
      ),
    );
  }
  const pageIds = [...fetched.values()].filter(needsPageWorkflow).map((r) => r.pageId as number);
  const stage = await runAsActivity('processPagesContent', () =>
    activities().processPagesContent({ crawlId, batchId: `${crawlId}-b1`, pageIds }),
  );
  return { fetched, pageIds, stage };
}

async function timeoutsOf(crawlId: string): Promise<string[]> {
  const { rows } = await db.query<{ url: string }>(
    `SELECT url FROM fetches WHERE crawl_id = $1 AND outcome = 'extract-timeout' ORDER BY id`,
    [crawlId],
  );
  return rows.map((row) => new URL(row.url).pathname);
}

async function pageId(p: string): Promise<number> {
  const { rows } = await db.query<{ id: string }>('SELECT id::text FROM pages WHERE url = $1', [
    `${site.origin}${p}`,
  ]);
  return Number(rows[0]?.id);
}

describe('a recrawl of a page whose analysis failed for good', () => {
  it('does not analyse the same body again, and analyses a changed one', async () => {
    slow.add('/docs/huge.html');
    pages.set('/', pageHtml('Index', ['/docs/huge.html'], 'The society keeps its handbooks here.'));
    pages.set('/docs/huge.html', pageHtml('Huge', [], 'A handbook far too slow to read.'));

    const t1 = await crawl('t1', ['/', '/docs/huge.html']);
    expect(t1.pageIds).toHaveLength(2);
    expect(t1.stage.pages[1]).toMatchObject({
      claimed: true,
      error: expect.stringMatching(/^extract-timeout: /),
    });
    expect(analysed.filter((p) => p === '/docs/huge.html')).toHaveLength(1);
    expect(await timeoutsOf('t1')).toEqual(['/docs/huge.html']);

    // Same seed again: the server answers 304 for both, and nothing is analysed.
    const logFrom = site.log.length;
    analysed.length = 0;
    const t2 = await crawl('t2', ['/', '/docs/huge.html']);
    expect(site.log.slice(logFrom).map((entry) => [entry.path, entry.status])).toEqual(
      expect.arrayContaining([
        ['/', 304],
        ['/docs/huge.html', 304],
      ]),
    );
    expect(t2.fetched.get('/docs/huge.html')).toMatchObject({ change: 'unchanged', current: true });
    expect(t2.fetched.get('/docs/huge.html')?.indexed).toBeUndefined();
    // The index is sent on only for the summary it lacks (this test's summarizePage writes none).
    expect(t2.pageIds).toEqual([await pageId('/')]);
    expect(analysed).toEqual([]);
    // Nothing failed in t2, and nothing of t2 is filed under t1.
    expect(await timeoutsOf('t1')).toEqual(['/docs/huge.html']);
    expect(await failuresByReason(db, 't2')).toEqual([]);

    // A 200 with the same body (no validators stored) is no different.
    await db.query('UPDATE pages SET etag = NULL, last_modified = NULL WHERE url = $1', [
      `${site.origin}/docs/huge.html`,
    ]);
    const t3 = await crawl('t3', ['/docs/huge.html']);
    expect(t3.fetched.get('/docs/huge.html')).toMatchObject({
      outcome: 'ok',
      change: 'unchanged',
      current: true,
    });
    expect(t3.pageIds).toEqual([]);
    expect(analysed).toEqual([]);

    // A page stage that gets the page anyway fails it at once, in its own crawl's fetch log.
    const huge = await pageId('/docs/huge.html');
    const again = await runAsActivity('processPagesContent', () =>
      activities().processPagesContent({ crawlId: 't3', batchId: 't3-late', pageIds: [huge] }),
    );
    expect(again.pages).toEqual([
      {
        pageId: huge,
        claimed: true,
        error: expect.stringMatching(/^extract-timeout: .*deadline of 30000 ms/),
      },
    ]);
    expect(analysed).toEqual([]);
    expect(await timeoutsOf('t3')).toEqual(['/docs/huge.html']);

    // A changed body is analysed again; once it succeeds, the failure is forgotten.
    slow.delete('/docs/huge.html');
    pages.set('/docs/huge.html', pageHtml('Huge', [], 'A handbook, now short enough to read at once.'));
    const t4 = await crawl('t4', ['/docs/huge.html']);
    expect(t4.fetched.get('/docs/huge.html')).toMatchObject({ change: 'changed' });
    expect(t4.stage.pages).toEqual([expect.objectContaining({ pageId: huge, claimed: true, chunks: 1 })]);
    expect(analysed).toEqual(['/docs/huge.html']);
    const { rows } = await db.query<{ failed: string | null; extracted: boolean }>(
      'SELECT extract_failed_hash AS failed, extracted_hash = content_hash AS extracted FROM pages WHERE id = $1',
      [huge],
    );
    expect(rows).toEqual([{ failed: null, extracted: true }]);
  }, 120_000);

  it('files a failure met on a 304 under the crawl that met it, not the crawl that stored the body', async () => {
    // Stored by c1, whose page stage never ran (a crash): c2's 304 still needs the page stage.
    pages.set('/docs/unread.html', pageHtml('Unread', [], 'A handbook nobody has read yet.'));
    const c1 = await runAsActivity('fetchAndStore', () =>
      createFetchAndStore({ db, robots: createRobotsPolicy({ db }) })({
        crawlId: 'c1',
        url: `${site.origin}/docs/unread.html`,
        depth: 0,
        spec: spec(),
      }),
    );
    expect(c1).toMatchObject({ outcome: 'ok', change: 'new' });

    slow.add('/docs/unread.html');
    analysed.length = 0;
    const c2 = await crawl('c2', ['/docs/unread.html']);
    expect(c2.fetched.get('/docs/unread.html')).toMatchObject({
      outcome: 'not-modified',
      change: 'unchanged',
    });
    expect(c2.stage.pages).toEqual([
      expect.objectContaining({ claimed: true, error: expect.stringMatching(/^extract-timeout: /) }),
    ]);
    expect(analysed).toEqual(['/docs/unread.html']);
    expect(await timeoutsOf('c1')).toEqual([]);
    expect(await timeoutsOf('c2')).toEqual(['/docs/unread.html']);
    expect(await failuresByReason(db, 'c2')).toEqual([
      { reason: 'extract-timeout', count: 1, sampleUrls: [`${site.origin}/docs/unread.html`] },
    ]);

    // And the next recrawl leaves it alone.
    analysed.length = 0;
    const c3 = await crawl('c3', ['/docs/unread.html']);
    expect(c3.pageIds).toEqual([]);
    expect(analysed).toEqual([]);
  }, 120_000);
});
