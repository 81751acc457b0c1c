/**
 * Documents through the page pipeline's analysis step, in the real analysis thread pool (pdf.js
 * runs its parser in that thread, with no worker of its own): a stored body whose Content-Type is a
 * document goes through its converter, is chunked, and PDF chunks carry their page numbers; a bad
 * PDF gives a named failure and no chunks; HTML is untouched.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { analysePageInThread, closePageAnalysisPool } from '../../activities/page-analysis-pool';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/documents');
const URL_BASE = 'http://127.0.0.1:8080/docs/';

afterAll(async () => {
  await closePageAnalysisPool();
});

function analyse(file: string, contentType: string, noindex = false) {
  return analysePageInThread({
    bodyGz: gzipSync(readFileSync(path.join(FIXTURES, file))),
    charset: null,
    url: URL_BASE + file,
    noindex,
    contentType,
  });
}

describe('documents in the analysis thread pool', () => {
  it('converts and chunks a PDF, each chunk with its pages', async () => {
    const analysis = await analyse('field-guide.pdf', 'application/pdf');
    expect(analysis.extracted.strategy).toBe('document:pdf');
    expect(analysis.extracted.title).toBe('Field Guide to Garden Beetles');
    expect(analysis.document?.sourceType).toBe('pdf');
    expect(analysis.document?.pageCount).toBe(2);
    expect(analysis.document?.links.map((link) => link.url)).toEqual([
      'https://beetles.example.org/habitats',
    ]);
    expect(analysis.chunks.length).toBeGreaterThan(0);
    expect(analysis.document?.chunkPages).toHaveLength(analysis.chunks.length);
    const pagesOf = (needle: string) => {
      const index = analysis.chunks.findIndex((chunk) => chunk.text.includes(needle));
      expect(index).toBeGreaterThanOrEqual(0);
      return analysis.document?.chunkPages?.[index];
    };
    // The whole guide fits one chunk of the default size or spreads over a few: either way the
    // first section is on page 1 and the last on page 2.
    expect(pagesOf('purple sheen')?.first).toBe(1);
    expect(pagesOf('four hundred aphids')?.last).toBe(2);
  });

  it('names the failure of an encrypted PDF and makes no chunks', async () => {
    const analysis = await analyse('encrypted.pdf', 'application/pdf');
    expect(analysis.extracted.strategy).toBe('failed: pdf-encrypted');
    expect(analysis.document?.failure?.reason).toBe('pdf-encrypted');
    expect(analysis.chunks).toEqual([]);
  });

  it('takes a .md served as text/plain as Markdown, front matter and all', async () => {
    const analysis = await analyse('pond-care.md', 'text/plain; charset=utf-8');
    expect(analysis.document?.sourceType).toBe('markdown');
    expect(analysis.document?.frontMatter?.tags).toEqual(['ponds', 'wildlife', 'seasons']);
    const chunk = analysis.chunks.find((c) => c.text.includes('Topping up with rainwater'));
    expect(chunk?.headingPath[0]).toBe('Looking After a Wildlife Pond');
  });

  it('leaves HTML to the HTML extraction', async () => {
    const analysis = await analysePageInThread({
      bodyGz: gzipSync(
        Buffer.from('<html><head><title>T</title></head><body><main><p>Plain page.</p></main></body></html>'),
      ),
      charset: 'utf-8',
      url: `${URL_BASE}index.html`,
      noindex: false,
      contentType: 'text/html; charset=utf-8',
    });
    expect(analysis.document).toBeUndefined();
    expect(analysis.extracted.strategy).not.toMatch(/^document:/);
    expect(analysis.extracted.text).toContain('Plain page.');
  });
});
