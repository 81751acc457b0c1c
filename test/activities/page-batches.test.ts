/**
 * The page batch activities against a real PGlite store: the claim is owned by the batch that made
 * it (a retried attempt finds its own pages again, another batch is turned away), a page that fails
 * for good is that page's error only, and an outage fails the whole attempt so Temporal retries it.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPageBatchActivities } from '../../activities/page-batches';
import { createPageContent } from '../../activities/page-content';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { pageHtml } from '../../testbed/generated-site';

let db: PgliteDatabase;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-page-batches-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function storePage(url: string, text: string): Promise<number> {
  const bytes = Buffer.from(pageHtml(text.slice(0, 20), [], text), 'utf8');
  const result = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_type, charset, content_hash, body_gz)
     VALUES ($1, $1, 'http://127.0.0.1:1', 'c1', 0, 200, 'text/html', 'utf-8', $2, $3)
     RETURNING id`,
    [url, createHash('sha256').update(bytes).digest('hex'), gzipSync(bytes)],
  );
  return Number(result.rows[0]?.id);
}

const summarizePage = async () => ({});

describe('processPagesContent', () => {
  it('claims for its batch only: a retry re-claims its pages, another batch is turned away', async () => {
    const { processPageContent } = createPageContent({ db });
    const { processPagesContent } = createPageBatchActivities({ db, processPageContent, summarizePage });
    const a = await storePage('http://127.0.0.1:1/a', 'Alpha page about harbors and lanterns in the fog.');
    const b = await storePage('http://127.0.0.1:1/b', 'Beta page about glaciers, canyons and granite walls.');

    const first = await processPagesContent({ crawlId: 'claims', batchId: 'batch-1', pageIds: [a] });
    expect(first.pages).toEqual([expect.objectContaining({ pageId: a, claimed: true, skipped: false })]);
    // The same batch again (a retried attempt): its page is still its own, and already extracted.
    const retried = await processPagesContent({ crawlId: 'claims', batchId: 'batch-1', pageIds: [a] });
    expect(retried.pages).toEqual([expect.objectContaining({ pageId: a, claimed: true, skipped: true })]);
    // Another batch of the crawl meets page a again (a redirect alias) beside a new page b.
    const other = await processPagesContent({ crawlId: 'claims', batchId: 'batch-2', pageIds: [a, b] });
    expect(other.pages).toEqual([
      { pageId: a, claimed: false },
      expect.objectContaining({ pageId: b, claimed: true, skipped: false }),
    ]);
    // Another crawl claims the same pages for itself.
    const recrawl = await processPagesContent({ crawlId: 'claims-2', batchId: 'batch-1', pageIds: [a, b] });
    expect(recrawl.pages.map((page) => page.claimed)).toEqual([true, true]);
    const rows = await db.query<{ crawl_id: string; page_id: string; batch_id: string }>(
      `SELECT crawl_id, page_id::text AS page_id, batch_id FROM crawl_pages_processed
        WHERE crawl_id LIKE 'claims%' ORDER BY crawl_id, page_id`,
    );
    expect(rows.rows).toEqual([
      { crawl_id: 'claims', page_id: String(a), batch_id: 'batch-1' },
      { crawl_id: 'claims', page_id: String(b), batch_id: 'batch-2' },
      { crawl_id: 'claims-2', page_id: String(a), batch_id: 'batch-1' },
      { crawl_id: 'claims-2', page_id: String(b), batch_id: 'batch-1' },
    ]);
  });

  it('reports a page that fails for good as its own error; the others are processed', async () => {
    const { processPageContent } = createPageContent({ db });
    const { processPagesContent } = createPageBatchActivities({ db, processPageContent, summarizePage });
    const good = await storePage('http://127.0.0.1:1/good', 'A page about meadows, willows and sonnets.');
    const missing = 987_654; // no such row: processPageContent fails with PageNotFound, not retryable
    const result = await processPagesContent({ crawlId: 'fails', batchId: 'b', pageIds: [missing, good] });
    expect(result.pages).toEqual([
      { pageId: missing, claimed: true, error: expect.stringMatching(/does not exist/) },
      expect.objectContaining({ pageId: good, claimed: true, skipped: false }),
    ]);
  });

  it('fails the attempt on a transient failure of any page, so the batch is retried', async () => {
    const { processPageContent } = createPageContent({ db });
    const good = await storePage('http://127.0.0.1:1/outage', 'A page about onyx, quartz and marble.');
    const flaky = createPageBatchActivities({
      db,
      summarizePage,
      processPageContent: (input) =>
        input.pageId === good ? Promise.reject(new Error('connection reset')) : processPageContent(input),
    });
    await expect(
      flaky.processPagesContent({ crawlId: 'outage', batchId: 'b', pageIds: [good] }),
    ).rejects.toThrow(/connection reset/);
    await expect(
      flaky.processPagesContent({ crawlId: 'outage', batchId: 'b', pageIds: [good, good] }),
    ).rejects.toMatchObject({ type: 'InvalidBatch', nonRetryable: true });
  });

  it("reports a page whose data the store refuses as that page's error, not a batch retried for ever", async () => {
    const { processPageContent } = createPageContent({ db });
    const refused = await storePage('http://127.0.0.1:1/refused', 'A page about nectar, ivory and jasper.');
    const good = await storePage('http://127.0.0.1:1/kept', 'A page about fjords, beacons and cobalt.');
    const batches = createPageBatchActivities({
      db,
      summarizePage,
      // The store's own refusal of a NUL in text (SQLSTATE 22021), as a converter's output once met it.
      processPageContent: async (input) => {
        if (input.pageId === refused) await db.query('SELECT $1::text', ['before\u0000after']);
        return processPageContent(input);
      },
    });
    const result = await batches.processPagesContent({
      crawlId: 'refused',
      batchId: 'b',
      pageIds: [refused, good],
    });
    expect(result.pages).toEqual([
      {
        pageId: refused,
        claimed: true,
        error: expect.stringMatching(/store refused this page's data \(SQLSTATE 22/),
      },
      expect.objectContaining({ pageId: good, claimed: true, skipped: false }),
    ]);
  });
});
