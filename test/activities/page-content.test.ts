/**
 * The page pipeline's CPU stage against a real PGlite store and the provisioned model's tokenizer:
 * a stored skopt page becomes Markdown, metadata and ordered, linked chunks; an unchanged body is
 * skipped; a changed body is re-chunked and keeps the vectors of the chunks that did not change.
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkHash, createPageContent } from '../../activities/page-content';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { unpackSite } from '../../testbed/sites';

let db: PgliteDatabase;
let dir: string;
let html: string;
const activities = () => createPageContent({ db });

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-page-content-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
  html = readFileSync(path.join(unpackSite('skopt-0.9'), 'modules/generated/skopt.sampler.Lhs.html'), 'utf8');
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function storePage(url: string, body: string, extra: { noindex?: boolean } = {}): Promise<number> {
  const bytes = Buffer.from(body, 'utf8');
  const result = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_type, charset, content_hash, body_gz, noindex)
     VALUES ($1, $1, 'http://127.0.0.1:1', 'c1', 0, 200, 'text/html', 'utf-8', $2, $3, $4)
     ON CONFLICT (url) DO UPDATE SET content_hash = EXCLUDED.content_hash, body_gz = EXCLUDED.body_gz
     RETURNING id`,
    [url, createHash('sha256').update(bytes).digest('hex'), gzipSync(bytes), extra.noindex ?? false],
  );
  return Number(result.rows[0]?.id);
}

interface ChunkRow {
  id: string;
  position: number;
  heading_path: string[];
  content: string;
  token_count: number;
  prev_id: string | null;
  next_id: string | null;
  chunk_hash: string;
  has_vector: boolean;
  ts_config: string;
}

async function chunksOf(pageId: number): Promise<ChunkRow[]> {
  const result = await db.query<ChunkRow>(
    `SELECT id, position, heading_path, content, token_count, prev_id, next_id, chunk_hash,
            embedding IS NOT NULL AS has_vector, ts_config::text AS ts_config
       FROM chunks WHERE page_id = $1 ORDER BY position`,
    [pageId],
  );
  return result.rows;
}

describe('processPageContent', () => {
  it('turns a stored page into Markdown, metadata and ordered, linked chunks', async () => {
    const pageId = await storePage('http://127.0.0.1:1/lhs.html', html);
    const result = await activities().processPageContent({ pageId });
    expect(result.skipped).toBe(false);
    expect(result.chunks).toBeGreaterThan(0);
    expect(result.toEmbed).toBe(result.chunks);

    const page = await db.query<{
      markdown: string;
      metadata: { wordCount: number };
      extract_strategy: string;
      extract_confidence: number;
      extracted_hash: string;
      content_hash: string;
      language: string;
    }>(
      'SELECT markdown, metadata, extract_strategy, extract_confidence, extracted_hash, content_hash, language FROM pages WHERE id = $1',
      [pageId],
    );
    const row = page.rows[0];
    expect(row?.markdown).toMatch(/^# .*skopt\.sampler.*\.Lhs/m);
    expect(row?.markdown).toContain('Latin hypercube sampling');
    expect(row?.metadata.wordCount).toBeGreaterThan(50);
    expect(row?.extract_strategy).toBeTruthy();
    expect(row?.extract_confidence).toBeGreaterThan(0);
    expect(row?.extracted_hash).toBe(row?.content_hash);

    const chunks = await chunksOf(pageId);
    expect(chunks).toHaveLength(result.chunks);
    expect(chunks.map((c) => c.position)).toEqual(chunks.map((_, i) => i));
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.heading_path[0]).toBe('skopt.sampler.Lhs');
      expect(chunk.token_count).toBeLessThanOrEqual(1024);
      expect(chunk.prev_id).toBe(i === 0 ? null : chunks[i - 1]?.id);
      expect(chunk.next_id).toBe(i === chunks.length - 1 ? null : chunks[i + 1]?.id);
      expect(chunk.chunk_hash).toBe(chunkHash({ headingPath: chunk.heading_path, text: chunk.content }));
      expect(chunk.ts_config).toBe('english');
    }
    // The chunks hold the page's text: every word of the Markdown's prose is in some chunk.
    const allText = chunks.map((c) => c.content).join('\n');
    expect(allText).toContain('maximin');
    expect(allText).toContain('iterations');
  });

  it('skips a page whose body has not changed since it was extracted', async () => {
    const pageId = await storePage('http://127.0.0.1:1/lhs.html', html);
    const before = await chunksOf(pageId);
    const result = await activities().processPageContent({ pageId });
    expect(result).toEqual({ chunks: before.length, toEmbed: before.length, skipped: true, indexed: false });
    expect((await chunksOf(pageId)).map((c) => c.id)).toEqual(before.map((c) => c.id));
  });

  it('re-chunks a changed page and keeps the vectors of unchanged chunks', async () => {
    const longPage = `<html lang="en"><head><title>Guide</title></head><body><main><h1>Guide</h1>
      ${Array.from(
        { length: 6 },
        (_, s) =>
          `<h2>Section ${s}</h2>${Array.from({ length: 12 }, (_, p) => `<p>Paragraph ${p} of section ${s} explains the optimizer settings in detail so the chunker has real prose to pack into pieces of about the target size.</p>`).join('')}`,
      ).join('')}</main></body></html>`;
    const url = 'http://127.0.0.1:1/guide.html';
    const pageId = await storePage(url, longPage);
    const first = await activities().processPageContent({ pageId });
    expect(first.chunks).toBeGreaterThan(2);
    // Stand-in vectors mark which rows existed; the real embed step is tested with the model elsewhere.
    await db.query(
      `UPDATE chunks SET embedding = array_fill(0.01::real, ARRAY[384])::vector, embedding_model = 'test-model',
              embedded_at = now() WHERE page_id = $1`,
      [pageId],
    );
    const changed = longPage.replace('Paragraph 3 of section 5', 'A rewritten paragraph of section 5');
    await storePage(url, changed);
    const second = await activities().processPageContent({ pageId });
    expect(second.skipped).toBe(false);
    const after = await chunksOf(pageId);
    const withVectors = after.filter((c) => c.has_vector);
    expect(second.toEmbed).toBe(after.length - withVectors.length);
    expect(second.toEmbed).toBeGreaterThan(0);
    expect(withVectors.length).toBeGreaterThan(0);
    expect(after.filter((c) => !c.has_vector).some((c) => c.content.includes('rewritten'))).toBe(true);
    expect(withVectors.some((c) => c.content.includes('rewritten'))).toBe(false);
  });

  it('keeps the extraction of a noindex page but gives it no chunks', async () => {
    const pageId = await storePage('http://127.0.0.1:1/private.html', html, { noindex: true });
    const result = await activities().processPageContent({ pageId });
    expect(result.chunks).toBe(0);
    const page = await db.query<{ markdown: string }>('SELECT markdown FROM pages WHERE id = $1', [pageId]);
    expect(page.rows[0]?.markdown).toContain('Latin hypercube');
  });

  it('fails without retry for a page id that does not exist', async () => {
    await expect(activities().processPageContent({ pageId: 987654 })).rejects.toMatchObject({
      type: 'PageNotFound',
      nonRetryable: true,
    });
  });
});
