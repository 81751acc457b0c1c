/**
 * A crawl's failures are the URLs whose last fetch in it failed: a 429 or 503 fetched again after its
 * Retry-After and stored is not one (it was listed as `http-429` beside the stored page).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { failuresByReason } from '../../report/crawl-report';

const ORIGIN = 'http://127.0.0.1:9';
let db: PgliteDatabase;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-crawl-report-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Fetch-log rows in the order given, as the crawl writes them. */
async function fetched(crawlId: string, rows: Array<[path: string, outcome: string, status?: number]>) {
  for (const [p, outcome, status] of rows) {
    await db.query(
      `INSERT INTO fetches (crawl_id, url, outcome, status, started_at) VALUES ($1, $2, $3, $4, now())`,
      [crawlId, `${ORIGIN}${p}`, outcome, status ?? null],
    );
  }
}

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
