/**
 * Hostile and broken pages through the whole text path a fetched page takes: body bytes → charset
 * decoding (activities/http/charset.ts) → extractPage → normalised Markdown → chunkMarkdown. Each
 * returns a result (or an empty one with its reason) within a bounded time, and the chunker copes
 * with whatever comes out. test/extract/extract-page.test.ts covers extractPage alone on strings;
 * these start from bytes and cover what it does not: declared and sniffed legacy charsets, invalid
 * UTF-8 as decoded by the fetcher, markup-dense and whitespace-free 10 MB lines, deep lists, quotes
 * and tables, binary and gzip bodies served as HTML.
 *
 * Tokens are counted with a simple word/punctuation counter: the bound under test is the chunker's
 * and extractor's work, not a vocabulary's.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../activities/http/charset';
import { chunkMarkdown, type MarkdownChunk } from '../../domain/chunking';
import { extractPage } from '../../extract';
import { parseDocument } from '../../extract/dom';
import { MAX_MARKDOWN_ELEMENTS, toMarkdown } from '../../extract/markdown';
import { cpuMs } from '../../testbed/cpu-time';

const countTokens = (text: string): number => (text.match(/[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu) ?? []).length;

/** Generous bound per page, in CPU time (see testbed/cpu-time; a wall-clock bound failed under a loaded CI run). */
const BOUND_MS = 10_000;

function pipeline(bytes: Buffer, contentType?: string) {
  const started = cpuMs();
  const decoded = decodeBody(bytes, contentType);
  const page = extractPage(decoded.text, 'https://example.test/page');
  const chunks = chunkMarkdown(page.markdown, { countTokens });
  const elapsedMs = cpuMs() - started;
  return { decoded, page, chunks, elapsedMs };
}

function expectSaneChunks(chunks: MarkdownChunk[], markdown: string): void {
  if (markdown.trim() === '') expect(chunks).toEqual([]);
  for (const chunk of chunks) {
    expect(chunk.tokenCount).toBeLessThanOrEqual(1024);
    expect(chunk.text.split('\n').filter((line) => /^\s*(`{3,}|~{3,})/.test(line)).length % 2).toBe(0);
  }
}

const html = (body: string, head = '') =>
  `<!DOCTYPE html><html><head>${head}<title>Test page</title></head><body><main><h1>Test page</h1>${body}</main></body></html>`;
const filler =
  '<p>This paragraph is ordinary text so that the page has enough words to count as content.</p>'.repeat(4);

/** A page whose paragraph holds `middle` as raw bytes, the markup around it in `encoding`. */
function pageWithBytes(middle: Buffer, head = '', encoding: BufferEncoding = 'utf8'): Buffer {
  const [before = '', after = ''] = html(`${filler}<p>\u0001</p>`, head).split('\u0001');
  return Buffer.concat([Buffer.from(before, encoding), middle, Buffer.from(after, encoding)]);
}

describe('bad input, from bytes to chunks', () => {
  it('an empty body gives an empty result and no chunks', () => {
    const run = pipeline(Buffer.alloc(0), 'text/html');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.page.strategy).toBe('empty');
    expect(run.page.markdown).toBe('');
    expect(run.chunks).toEqual([]);
  });

  it('a 1 MB single line of dense inline markup (60,000 elements in one paragraph)', () => {
    const line = html(`<p>${'<a href="/x">link</a> <b>bold</b> <code>c</code> '.repeat(20_000)}</p>`);
    expect(line).not.toContain('\n');
    const run = pipeline(Buffer.from(line, 'utf8'), 'text/html; charset=utf-8');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS * 3);
    // Over the Markdown stage's element budget, inline markup is kept as its words.
    expect(run.page.markdown).toContain('link bold c link bold c');
    expect(run.chunks.length).toBeGreaterThan(10);
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it("the Markdown stage alone on 5 MB (the extractor's input cap) of dense inline markup", () => {
    const body = `<main><h1>T</h1><p>${'<a href="/x">link</a> <b>bold</b> <code>c</code> '.repeat(100_000)}</p><pre><code class="language-js">let kept = "&lt;b&gt;as code&lt;/b&gt;";</code></pre></main>`;
    const root = parseDocument(`<html><body>${body}</body></html>`, undefined, 'linkedom').querySelector(
      'main',
    ) as Element;
    expect(root.querySelectorAll('*').length).toBeGreaterThan(MAX_MARKDOWN_ELEMENTS);
    const started = cpuMs();
    const markdown = toMarkdown(root);
    const chunks = chunkMarkdown(markdown, { countTokens });
    expect(cpuMs() - started).toBeLessThan(BOUND_MS);
    expect(markdown).toContain('```js\nlet kept = "<b>as code</b>";\n```');
    expectSaneChunks(chunks, markdown);
  });

  it('a page of more blocks than the element budget becomes paragraphs of its text', () => {
    const body = `<main><h1>T</h1>${'<div><p>para</p></div>'.repeat(MAX_MARKDOWN_ELEMENTS)}<pre class="lang-sh">ls   -l\n  cd x</pre></main>`;
    const root = parseDocument(`<html><body>${body}</body></html>`, undefined, 'linkedom').querySelector(
      'main',
    ) as Element;
    const started = cpuMs();
    const markdown = toMarkdown(root);
    expect(cpuMs() - started).toBeLessThan(BOUND_MS);
    expect(markdown.startsWith('# T\n\npara\n\npara\n\n')).toBe(true);
    expect(markdown.match(/para/g)).toHaveLength(MAX_MARKDOWN_ELEMENTS);
    expect(markdown.endsWith('para\n\n```sh\nls   -l\n  cd x\n```')).toBe(true);
  });

  it('a 10 MB word without any whitespace', () => {
    const run = pipeline(Buffer.from(html(`<p>${'x'.repeat(10_000_000)}</p>`)), 'text/html');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.page.truncated).toBe(true);
    expectSaneChunks(run.chunks, run.page.markdown);
    // The word is cut into pieces, none lost: the chunks hold every x the extractor kept.
    const kept = (run.page.markdown.match(/x/g) ?? []).length;
    expect(
      run.chunks.reduce((sum, c) => sum + (c.text.slice(c.overlapChars).match(/x/g) ?? []).length, 0),
    ).toBe(kept);
  });

  for (const [name, open, close] of [
    ['lists', '<ul><li>', '</li></ul>'],
    ['blockquotes', '<blockquote>', '</blockquote>'],
    ['tables', '<table><tr><td>', '</td></tr></table>'],
    ['unclosed inline and block mix', '<span><em><div>', ''],
  ] as const) {
    it(`markup nested 10,000 levels deep: ${name}`, () => {
      const run = pipeline(
        Buffer.from(html(`${filler}${open.repeat(10_000)}deepest words${close.repeat(10_000)}`)),
        'text/html',
      );
      expect(run.elapsedMs).toBeLessThan(BOUND_MS);
      expect(run.page.text).toContain('deepest words');
      expect(run.page.markdown).toContain('deepest words');
      expectSaneChunks(run.chunks, run.page.markdown);
    });
  }

  it('invalid UTF-8 decodes with replacement characters and keeps the valid text', () => {
    const bytes = pageWithBytes(
      Buffer.concat([
        Buffer.from('before '),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98]),
        Buffer.from(' after'),
      ]),
    );
    const run = pipeline(bytes, 'text/html; charset=utf-8');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.decoded.charset).toBe('utf-8');
    expect(run.page.markdown).toMatch(/before \ufffd+\(\ufffd+ after/);
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it('windows-1252 declared by <meta charset>: smart quotes, euro sign, dashes', () => {
    const bytes = pageWithBytes(
      Buffer.from([
        0x93, 0x51, 0x75, 0x6f, 0x74, 0x65, 0x64, 0x94, 0x20, 0x80, 0x35, 0x20, 0x96, 0x20, 0xe9, 0x74, 0xe9,
      ]),
      '<meta charset=windows-1252>',
      'latin1',
    );
    const run = pipeline(bytes);
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.decoded).toMatchObject({ charset: 'windows-1252', source: 'meta' });
    expect(run.page.markdown).toContain('“Quoted” €5 – été');
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it('Shift_JIS declared by <meta http-equiv>', () => {
    // 日本語のテスト in Shift_JIS.
    const japanese = Buffer.from([
      0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x65, 0x83, 0x58, 0x83, 0x67,
    ]);
    const bytes = pageWithBytes(
      japanese,
      '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">',
    );
    const run = pipeline(bytes);
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.decoded).toMatchObject({ charset: 'shift_jis', source: 'meta' });
    expect(run.page.markdown).toContain('日本語のテスト');
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it('ISO-8859-1 declared only by the Content-Type header', () => {
    const bytes = Buffer.from(
      html(`${filler}<p>Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, 20\u00b0C</p>`),
      'latin1',
    );
    const run = pipeline(bytes, 'text/html; charset=ISO-8859-1');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    // WHATWG reads the label iso-8859-1 as windows-1252.
    expect(run.decoded).toMatchObject({ charset: 'windows-1252', source: 'header' });
    expect(run.page.markdown).toContain('Café crème brûlée, 20°C');
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it('UTF-16LE sniffed from its byte-order mark, with no header and a stale meta', () => {
    const text = html(`${filler}<p>Größe – ünïcödé</p>`, '<meta charset="iso-8859-1">');
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const run = pipeline(bytes);
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.decoded).toMatchObject({ charset: 'utf-16le', source: 'bom' });
    expect(run.page.markdown).toContain('Größe – ünïcödé');
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it('binary bytes (a PNG) served as text/html', () => {
    const png = Buffer.alloc(2_000_000);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
    let state = 12345;
    for (let i = 8; i < png.length; i++) {
      state = (state * 1103515245 + 12345) >>> 0;
      png[i] = state >>> 24;
    }
    const run = pipeline(png, 'text/html');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(typeof run.page.markdown).toBe('string');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no binary control bytes may reach the Markdown
    expect(run.page.markdown).not.toMatch(/[\u0000-\u0008\u000b\u000e-\u001f]/);
    expectSaneChunks(run.chunks, run.page.markdown);
  });

  it('a gzip body served as text/html without Content-Encoding', () => {
    const bytes = gzipSync(Buffer.from(html(filler.repeat(200))));
    const run = pipeline(bytes, 'text/html; charset=utf-8');
    expect(run.elapsedMs).toBeLessThan(BOUND_MS);
    expect(run.page.markdown).not.toContain('ordinary text');
    expectSaneChunks(run.chunks, run.page.markdown);
  });
});
