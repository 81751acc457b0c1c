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
