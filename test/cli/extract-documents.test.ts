/**
 * `gleaner extract` on the documents a crawl reads (PDF, DOCX, Markdown, text): from files and from
 * a loopback server, converted as the page path converts them, not refused as "not HTML".
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const CLI_TIMEOUT_MS = 120_000;
const DOCUMENTS = path.resolve(__dirname, '../fixtures/documents');
const fixture = (name: string) => path.join(DOCUMENTS, name);

let server: SiteServer;
beforeAll(async () => {
  server = await serveSite(undefined);
  // A download handler: a PDF behind a URL with no extension, served as bytes.
  server.route('/download', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/octet-stream' })
      .end(readFileSync(fixture('field-guide.pdf')));
  });
  server.route('/notes/pond-care.md', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      .end(readFileSync(fixture('pond-care.md')));
  });
});
afterAll(() => server.close());

describe('gleaner extract of documents', () => {
  it('converts PDF, DOCX, Markdown and text files as a crawl does', async () => {
    const [pdf, docx, markdown, text] = await Promise.all(
      [
        ['field-guide.pdf', '--format', 'json'],
        ['beekeeping-notes.docx'],
        ['pond-care.md', '--url', 'https://ponds.example/care/pond-care.md'],
        ['seed-catalogue.txt', '--format', 'text'],
      ].map(([name, ...flags]) => runGleaner(['extract', fixture(name ?? ''), ...flags], {}, CLI_TIMEOUT_MS)),
    );
    for (const result of [pdf, docx, markdown, text]) expect(result?.code, result?.stderr).toBe(0);
    const page = JSON.parse(pdf?.stdout ?? '');
    expect(page.sourceType).toBe('pdf');
    expect(page.pageCount).toBe(2);
    expect(page.title).toBe('Field Guide to Garden Beetles');
    expect(page.markdown).toMatch(/^## Leaf beetles$/m);
    expect(docx?.stdout).toMatch(/^# Beekeeping Basics$/m);
    expect(docx?.stdout).toMatch(/^## Hive inspection$/m);
    // The front matter is read as such, not printed as a paragraph; relative links resolve against --url.
    expect(markdown?.stdout).toMatch(/^# Looking After a Wildlife Pond$/m);
    expect(markdown?.stdout).not.toContain('tags:');
    expect(markdown?.stdout).toContain('](https://ponds.example/calendars/amphibians.md)');
    expect(text?.stdout).toContain('# This line starts with a hash but is not a heading.');
  });

  it('reads a document a loopback server serves, by its bytes or its name', async () => {
    const [pdf, markdown] = await Promise.all(
      ['download', 'notes/pond-care.md'].map((route) =>
        runGleaner(
          ['extract', `${server.url}${route}`, '--allow-host', '127.0.0.1', '--format', 'json'],
          {},
          CLI_TIMEOUT_MS,
        ),
      ),
    );
    expect(pdf?.code, pdf?.stderr).toBe(0);
    expect(JSON.parse(pdf?.stdout ?? '')).toMatchObject({ sourceType: 'pdf', pageCount: 2 });
    expect(markdown?.code, markdown?.stderr).toBe(0);
    const page = JSON.parse(markdown?.stdout ?? '');
    expect(page.sourceType).toBe('markdown');
    expect(page.frontMatter.tags).toEqual(['ponds', 'wildlife', 'seasons']);
    expect(page.markdown).toContain(`](${server.origin}/calendars/amphibians.md)`);
  });

  it('converts documents named in a manifest, and reports one it cannot read in its place', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-extract-documents-'));
    try {
      const manifest = path.join(dir, 'documents.jsonl');
      writeFileSync(
        manifest,
        [
          { id: 'guide', file: fixture('field-guide.pdf') },
          { id: 'locked', file: fixture('encrypted.pdf') },
          { id: 'notes', file: fixture('greenhouse-handbook.docx') },
        ]
          .map((line) => JSON.stringify(line))
          .join('\n'),
      );
      const result = await runGleaner(['extract', '--manifest', manifest], {}, CLI_TIMEOUT_MS);
      expect(result.code).toBe(1);
      const [guide, locked, notes] = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(guide).toMatchObject({ id: 'guide', title: 'Field Guide to Garden Beetles' });
      expect(locked).toMatchObject({ id: 'locked', line: 2, error: expect.stringMatching(/pdf-encrypted/) });
      expect(notes.id).toBe('notes');
      expect(notes.markdown).toMatch(/^## /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says why a document cannot be read, exit status 2', async () => {
    const result = await runGleaner(['extract', fixture('encrypted.pdf')], {}, CLI_TIMEOUT_MS);
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toMatch(/encrypted\.pdf: cannot read it as pdf \(pdf-encrypted: /);
    expect(result.stdout).toBe('');
  });
});
