/**
 * Stored documents through the page pipeline's CPU stage, against a real PGlite store and the
 * analysis thread pool: a PDF row (content type `application/pdf`) becomes the page's Markdown and
 * chunks with a sentence from its middle and its headings; an encrypted PDF leaves no chunks and its
 * strategy names why.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePageAnalysisPool } from '../../activities/page-analysis-pool';
import { createPageContent } from '../../activities/page-content';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/documents');
let db: PgliteDatabase;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-page-documents-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
});

afterAll(async () => {
  await closePageAnalysisPool();
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function storeDocument(file: string, contentType: string): Promise<number> {
  const bytes = readFileSync(path.join(FIXTURES, file));
  const url = `http://127.0.0.1:1/docs/${file}`;
  const result = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_type, charset, content_hash, body_gz, noindex)
     VALUES ($1, $1, 'http://127.0.0.1:1', 'c1', 0, 200, $2, NULL, $3, $4, false)
     RETURNING id`,
    [url, contentType, createHash('sha256').update(bytes).digest('hex'), gzipSync(bytes)],
  );
  return Number(result.rows[0]?.id);
}

describe('processPageContent on stored documents', () => {
  it('indexes a PDF: Markdown with its headings, chunks holding a sentence from its middle', async () => {
    const pageId = await storeDocument('field-guide.pdf', 'application/pdf');
    const result = await createPageContent({ db }).processPageContent({ pageId });
    expect(result.skipped).toBe(false);
    expect(result.chunks).toBeGreaterThan(0);
    const page = await db.query<{ markdown: string; title: string; extract_strategy: string }>(
      'SELECT markdown, title, extract_strategy FROM pages WHERE id = $1',
      [pageId],
    );
    expect(page.rows[0]?.title).toBe('Field Guide to Garden Beetles');
    expect(page.rows[0]?.extract_strategy).toBe('document:pdf');
    expect(page.rows[0]?.markdown).toContain('## Leaf beetles');
    const chunks = await db.query<{ content: string }>('SELECT content FROM chunks WHERE page_id = $1', [
      pageId,
    ]);
    expect(chunks.rows.map((row) => row.content).join('\n')).toContain(
      'The scarlet lily beetle squeaks when it is picked up',
    );
  });

  it('stores the PDF pages each chunk spans (migration 017); an HTML row has none', async () => {
    const pageId = await storeDocument('long-report.pdf', 'application/pdf');
    await createPageContent({ db }).processPageContent({ pageId });
    const chunks = await db.query<{ page_first: number | null; page_last: number | null }>(
      'SELECT page_first, page_last FROM chunks WHERE page_id = $1 ORDER BY position',
      [pageId],
    );
    expect(chunks.rows.length).toBeGreaterThan(0);
    for (const row of chunks.rows) {
      expect(row.page_first).toBeGreaterThanOrEqual(1);
      expect(row.page_last).toBeGreaterThanOrEqual(row.page_first ?? 1);
    }
    // One sentence on each of its 40 pages: the chunks span page 1 to page 40.
    expect(chunks.rows[0]?.page_first).toBe(1);
    expect(chunks.rows.at(-1)?.page_last).toBe(40);
    const html = await db.query<{ id: number }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_type, content_hash, body_gz, noindex)
       VALUES ('http://127.0.0.1:1/a', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1', 'c1', 0, 200, 'text/html', 'h', $1, false)
       RETURNING id`,
      [
        gzipSync(
          Buffer.from(
            '<html><head><title>A</title></head><body><main><h1>A page</h1><p>Some words about pages that are long enough to be kept as the main content of it.</p></main></body></html>',
          ),
        ),
      ],
    );
    const htmlId = Number(html.rows[0]?.id);
    await createPageContent({ db }).processPageContent({ pageId: htmlId });
    const htmlChunks = await db.query<{ page_first: number | null }>(
      'SELECT page_first FROM chunks WHERE page_id = $1',
      [htmlId],
    );
    expect(htmlChunks.rows.length).toBeGreaterThan(0);
    expect(htmlChunks.rows.every((row) => row.page_first === null)).toBe(true);
  });

  it('records an encrypted PDF with its reason and no chunks', async () => {
    const pageId = await storeDocument('encrypted.pdf', 'application/pdf');
    const result = await createPageContent({ db }).processPageContent({ pageId });
    expect(result.chunks).toBe(0);
    const page = await db.query<{ extract_strategy: string }>(
      'SELECT extract_strategy FROM pages WHERE id = $1',
      [pageId],
    );
    expect(page.rows[0]?.extract_strategy).toBe('failed: pdf-encrypted');
  });
});
