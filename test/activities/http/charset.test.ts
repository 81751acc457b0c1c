import { describe, expect, it } from 'vitest';
import { charsetFromContentType, decodeBody, sniffMetaCharset } from '../../../activities/http/charset.ts';

// "café €" in windows-1252: é = 0xE9, € = 0x80.
const CAFE_1252 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
// "日本語" in Shift_JIS.
const NIHONGO_SJIS = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]);

const html = (head: string, body: Buffer): Buffer =>
  Buffer.concat([
    Buffer.from(`<!doctype html><html><head>${head}</head><body>`),
    body,
    Buffer.from('</body></html>'),
  ]);

describe('decodeBody', () => {
  it('uses the Content-Type charset', () => {
    const r = decodeBody(CAFE_1252, 'text/html; charset=windows-1252');
    expect(r).toMatchObject({ text: 'café €', charset: 'windows-1252', source: 'header' });
  });

  it('maps latin1 / iso-8859-1 labels to windows-1252 as browsers do', () => {
    expect(decodeBody(CAFE_1252, 'text/html; charset="ISO-8859-1"').text).toBe('café €');
    expect(decodeBody(CAFE_1252, 'text/html;charset=latin1').charset).toBe('windows-1252');
  });

  it('decodes Shift_JIS from the header', () => {
    const r = decodeBody(NIHONGO_SJIS, 'text/html; charset=Shift_JIS');
    expect(r).toMatchObject({ text: '日本語', charset: 'shift_jis' });
  });

  it('sniffs <meta charset> in the first 1024 bytes', () => {
    const r = decodeBody(html('<meta charset="shift_jis">', NIHONGO_SJIS), 'text/html');
    expect(r.charset).toBe('shift_jis');
    expect(r.source).toBe('meta');
    expect(r.text).toContain('<body>日本語</body>');
  });

  it('sniffs <meta http-equiv=content-type>', () => {
    const head = "<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=windows-1252'>";
    const r = decodeBody(html(head, CAFE_1252));
    expect(r.charset).toBe('windows-1252');
    expect(r.text).toContain('café €');
  });

  it('ignores a meta tag inside a comment and one past 1024 bytes', () => {
    const inComment = html('<!-- <meta charset="shift_jis"> -->', CAFE_1252);
    expect(decodeBody(inComment).charset).toBe('utf-8');
    const late = html(`${' '.repeat(1100)}<meta charset="shift_jis">`, NIHONGO_SJIS);
    expect(decodeBody(late).charset).toBe('utf-8');
  });

  it('prefers the header over the meta tag', () => {
    const r = decodeBody(html('<meta charset="shift_jis">', CAFE_1252), 'text/html; charset=windows-1252');
    expect(r.charset).toBe('windows-1252');
  });

  it('honours a BOM first and strips it', () => {
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo')]);
    expect(decodeBody(utf8, 'text/html; charset=windows-1252')).toMatchObject({
      text: 'héllo',
      source: 'bom',
    });
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hé', 'utf16le')]);
    expect(decodeBody(utf16le)).toMatchObject({ text: 'hé', charset: 'utf-16le' });
  });

  it('treats a meta claim of UTF-16 as UTF-8', () => {
    expect(decodeBody(html('<meta charset="utf-16">', Buffer.from('é'))).charset).toBe('utf-8');
  });

  it('falls back to UTF-8 for unknown labels and replaces invalid bytes without throwing', () => {
    const bytes = Buffer.from([0x61, 0xff, 0xfe, 0x62, 0xc3]);
    const r = decodeBody(bytes, 'text/html; charset=no-such-charset');
    expect(r.charset).toBe('utf-8');
    expect(r.text).toBe('a\uFFFD\uFFFDb\uFFFD');
  });

  it('decodes an empty body', () => {
    expect(decodeBody(Buffer.alloc(0))).toMatchObject({ text: '', charset: 'utf-8', source: 'default' });
  });

  it('handles other ICU encodings', () => {
    // "한" in EUC-KR, "中" in GBK, "Ω" in ISO-8859-7.
    expect(decodeBody(Buffer.from([0xc7, 0xd1]), 'text/html; charset=euc-kr').text).toBe('한');
    expect(decodeBody(Buffer.from([0xd6, 0xd0]), 'text/html; charset=gbk').text).toBe('中');
    expect(decodeBody(Buffer.from([0xd9]), 'text/html; charset=iso-8859-7').text).toBe('Ω');
  });
});

describe('helpers', () => {
  it('extracts the charset parameter', () => {
    expect(charsetFromContentType('text/html; Charset="UTF-8"; foo=bar')).toBe('UTF-8');
    expect(charsetFromContentType('text/html')).toBeUndefined();
    expect(charsetFromContentType(undefined)).toBeUndefined();
  });

  it('reads the first usable meta tag', () => {
    expect(sniffMetaCharset(Buffer.from('<meta name="x"><meta charset=euc-kr />'))).toBe('euc-kr');
    expect(sniffMetaCharset(Buffer.from('<p>no meta</p>'))).toBeUndefined();
  });
});
