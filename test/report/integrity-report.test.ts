/**
 * The integrity report's "blocked and failed URLs" are URLs whose last fetch failed: a recrawl's
 * 304s, skipped bodies and a missing /sitemap.xml were listed there, and every fetch of a URL
 * counted once more (four recrawls of an unchanged site: `not-modified 304: 16`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgliteDatabase } from '../../db/pglite-database';
import { integrityReport } from '../../report/integrity-report';
import { insertFetches } from '../../testbed/fetch-log';
import { type LoopbackStore, openLoopbackStore } from '../../testbed/loopback-store';

const ORIGIN = 'http://127.0.0.1:9';
let store: LoopbackStore;
let db: PgliteDatabase;

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-integrity-report-');
  db = store.db;
});

afterAll(async () => {
  await store?.close();
});

const fetched = (crawlId: string, rows: Parameters<typeof insertFetches>[3]) =>
  insertFetches(db, crawlId, ORIGIN, rows);

describe('integrityReport fetchProblems', () => {
  it('lists each URL once, by its last fetch, and never a success', async () => {
    await fetched('c1', [
      ['/', 'ok', 200],
      ['/a', 'ok', 200],
      ['/busy', 'http-error', 429],
      ['/busy', 'ok', 200],
      ['/down', 'http-error', 500],
      ['/private', 'robots-blocked'],
      ['/image', 'unsupported-content-type', 200],
      ['/sitemap.xml', 'sitemap-http-error', 404],
    ]);
    // Two recrawls of the same site: unchanged pages answer 304, the failures fail again.
    for (const crawlId of ['c2', 'c3']) {
      await fetched(crawlId, [
        ['/', 'not-modified', 304],
        ['/a', 'not-modified', 304],
        ['/busy', 'not-modified', 304],
        ['/down', 'http-error', 500],
        ['/private', 'robots-blocked'],
        ['/sitemap.xml', 'sitemap-http-error', 404],
      ]);
    }
    // A page that came back after a failure is no longer failed.
    await fetched('c4', [
      ['/flaky', 'network-error'],
      ['/gone', 'ok', 200],
    ]);
    await fetched('c5', [
      ['/flaky', 'ok', 200],
      ['/gone', 'http-error', 404],
    ]);

    const report = await integrityReport(db);
    expect(report.fetchProblems).toEqual([
      { outcome: 'http-error', status: 404, count: 1, samples: [`${ORIGIN}/gone`] },
      { outcome: 'http-error', status: 500, count: 1, samples: [`${ORIGIN}/down`] },
      { outcome: 'robots-blocked', status: null, count: 1, samples: [`${ORIGIN}/private`] },
    ]);
  });
});

describe('integrityReport staleSummaries', () => {
  it('lists live pages summarised from an older extraction, not pages a recrawl removed', async () => {
    const page = async (p: string, removed: boolean) => {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, extracted_hash, removed_at, removed_reason)
         VALUES ($1, $1, $2, 'c1', 1, 200, 'current', $3, $4) RETURNING id::text`,
        [`${ORIGIN}${p}`, ORIGIN, removed ? new Date() : null, removed ? 'http-404' : null],
      );
      await db.query(
        `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary)
         VALUES ($1, 'older', 'offline', 'offline', 'what it said')`,
        [Number(rows[0]?.id)],
      );
    };
    await page('/changed-since', false);
    await page('/gone', true);
    const stale = (await integrityReport(db)).checks.find((c) => c.name === 'staleSummaries');
    expect(stale).toMatchObject({ count: 1, samples: [`${ORIGIN}/changed-since`] });
  });
});
