/**
 * A crawl's failures are the URLs whose last fetch in it failed: a 429 or 503 fetched again after its
 * Retry-After and stored is not one (it was listed as `http-429` beside the stored page).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgliteDatabase } from '../../db/pglite-database';
import { failuresByReason } from '../../report/crawl-report';
import { insertFetches } from '../../testbed/fetch-log';
import { type LoopbackStore, openLoopbackStore } from '../../testbed/loopback-store';

const ORIGIN = 'http://127.0.0.1:9';
let store: LoopbackStore;
let db: PgliteDatabase;

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-crawl-report-');
  db = store.db;
});

afterAll(async () => {
  await store?.close();
});

const fetched = (crawlId: string, rows: Parameters<typeof insertFetches>[3]) =>
  insertFetches(db, crawlId, ORIGIN, rows);

describe('failuresByReason', () => {
  it('counts a URL by its last fetch in the crawl, not by any', async () => {
    await fetched('c1', [
      ['/retried-429', 'http-error', 429],
      ['/retried-503', 'http-error', 503],
      ['/gone', 'ok', 200],
      ['/down', 'http-error', 500],
      ['/retried-429', 'ok', 200],
      ['/retried-503', 'http-error', 503],
      ['/retried-503', 'ok', 200],
      ['/gone', 'http-error', 404],
      ['/down', 'http-error', 500],
      ['/far', 'network-error'],
      ['/sitemap.xml', 'sitemap-missing', 404],
    ]);
    // Another crawl's fetch of the same URL changes nothing here.
    await fetched('c2', [['/down', 'ok', 200]]);
    expect(await failuresByReason(db, 'c1')).toEqual([
      { reason: 'http-404', count: 1, sampleUrls: [`${ORIGIN}/gone`] },
      { reason: 'http-500', count: 1, sampleUrls: [`${ORIGIN}/down`] },
      { reason: 'unreachable', count: 1, sampleUrls: [`${ORIGIN}/far`] },
    ]);
    expect(await failuresByReason(db, 'c2')).toEqual([]);
  });
});
