/**
 * The binary-content check the crawl applies to HTML responses before storing them, from bytes as the
 * fetcher decodes them (activities/http/charset.ts): binary data is refused whatever charset it was
 * decoded with, and real pages in legacy encodings, UTF-16, or with a few stray control bytes pass.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../activities/http/charset';
import { looksBinary } from '../../extract/binary-content';

/** Seeded bytes, so a failure is the same on every run. */
function noise(length: number, seed = 12345): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

const binary = (bytes: Buffer, contentType = 'text/html') => looksBinary(decodeBody(bytes, contentType).text);

const page = (body: string, head = '') =>
  `<!DOCTYPE html><html><head>${head}<title>Notes</title></head><body><main><h1>Notes</h1>${body}</main></body></html>`;
const prose =
  '<p>Runner beans climb fast on a wigwam of hazel poles and crop from midsummer until the first frost.</p>';

describe('looksBinary', () => {
  it('refuses random bytes served as HTML, whatever charset they are decoded with', () => {
    for (const contentType of [
      'text/html',
      'text/html; charset=utf-8',
      'text/html; charset=iso-8859-1',
      'text/html; charset=shift_jis',
      'text/html; charset=euc-kr',
      'text/html; charset=gbk',
    ]) {
      for (const [length, seed] of [
        [5000, 1],
        [300, 2],
        [2_000_000, 3],
      ] as const)
        expect(binary(noise(length, seed), contentType), `${length} bytes as ${contentType}`).toBe(true);
    }
  });

  it('refuses a PNG and a gzip body served as text/html', () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), noise(4000)]);
    expect(binary(png)).toBe(true);
    // Compressed text is as good as random.
    expect(binary(gzipSync(Buffer.from(page(prose.repeat(200)))))).toBe(true);
  });

  it('keeps pages in legacy charsets, declared by header or meta', () => {
    const latin1 = Buffer.from(
      page(`${prose}<p>Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, 20\u00b0C</p>`),
      'latin1',
    );
    expect(binary(latin1, 'text/html; charset=ISO-8859-1')).toBe(false);
    // 日本語のテスト in Shift_JIS, between ASCII markup.
    const japanese = Buffer.from([
      0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x65, 0x83, 0x58, 0x83, 0x67,
    ]);
    const [before = '', after = ''] = page('<p>\u0001</p>', '<meta charset="shift_jis">').split('\u0001');
    const shiftJis = Buffer.concat([Buffer.from(before), ...Array(200).fill(japanese), Buffer.from(after)]);
    expect(binary(shiftJis)).toBe(false);
    // The same page with nothing declaring its charset decodes to replacement characters, not controls.
    const undeclared = Buffer.concat([Buffer.from(page('<p>')), ...Array(200).fill(japanese)]);
    expect(binary(undeclared)).toBe(false);
  });

  it('keeps UTF-16 pages, with a byte-order mark and without one', () => {
    const text = page(`${prose}<p>Größe – ünïcödé</p>`.repeat(20));
    expect(binary(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))).toBe(false);
    expect(binary(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]))).toBe(
      false,
    );
    // No BOM and no label: decoded as UTF-8, one NUL after every ASCII character, which extraction drops.
    expect(binary(Buffer.from(page(prose.repeat(20)), 'utf16le'))).toBe(false);
  });

  it('keeps pages with a few stray control bytes or NULs, and NUL padding after the page', () => {
    const stray = (controls: string) => Buffer.from(page(`${prose}<p>one${controls}two</p>${prose}`));
    expect(binary(stray('\u0000\u0000\u0000'))).toBe(false);
    expect(binary(stray('\u000b\u0008\u001a\u0002\u0003'))).toBe(false);
    expect(binary(Buffer.from(`<p>a\u0000b\u0000c\u0000</p>`))).toBe(false);
    expect(binary(Buffer.concat([Buffer.from(page(prose)), Buffer.alloc(6000)]))).toBe(false);
    // Tabs, line and form feeds, and the escapes of ISO-2022-JP are text.
    expect(binary(Buffer.from(page(`<pre>\t\r\n\f\u001b$B</pre>`.repeat(500))))).toBe(false);
  });

  it('keeps an empty body (extraction reports it as empty)', () => {
    expect(binary(Buffer.alloc(0))).toBe(false);
  });
});
