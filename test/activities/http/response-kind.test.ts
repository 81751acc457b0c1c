/**
 * Which responses a crawl takes by its `contentTypes`: the ones fetchPage reads on their headers,
 * what a response is by its type and URL (or, for octet-stream at a URL that says nothing, by its
 * bytes), and the ones refused after all (a kind not asked for, a binary document cut at the body cap).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceptResponseFor, admitResponseKind, responseKindOf } from '../../../activities/http/fetch-options';
import type { FetchPageResult } from '../../../activities/http/fetch-result';
import { DOCX_MIME } from '../../../extract/documents/document-type';

const FIXTURES = path.join(import.meta.dirname, '../../fixtures/documents');

function ok(
  contentType: string,
  url: string,
  truncated = false,
  text = 'x',
  body: Buffer = Buffer.from(text),
): FetchPageResult {
  return {
    kind: 'ok',
    requestedUrl: url,
    finalUrl: url,
    redirects: [],
    status: 200,
    headers: { 'content-type': contentType },
    timings: { startedAtMs: 0, totalMs: 1 },
    bytes: 10,
    wireBytes: 10,
    body,
    text,
    charset: 'utf-8',
    contentType,
    ...(truncated ? { truncated: true } : {}),
  };
}

describe('response kinds and the crawl content types', () => {
  it('has fetchPage read, on the headers, only a kind asked for or bytes that may be one', () => {
    const htmlAndPdf = acceptResponseFor(['html', 'pdf']);
    expect(htmlAndPdf('text/html', 'https://h.org/a')).toBe(true);
    expect(htmlAndPdf('application/pdf', 'https://h.org/a')).toBe(true);
    expect(htmlAndPdf('application/octet-stream', 'https://h.org/r.pdf')).toBe(true);
    // The URL says Markdown, whatever generic type carries it: refused before the body is read.
    expect(htmlAndPdf('text/plain', 'https://h.org/README.md')).toBe(false);
    expect(htmlAndPdf('application/octet-stream', 'https://h.org/README.md')).toBe(false);
    expect(htmlAndPdf('text/plain', 'https://h.org/notes')).toBe(false);
    // Nothing to go by but the bytes: read, to be sniffed.
    expect(htmlAndPdf('application/octet-stream', 'https://h.org/download?id=3')).toBe(true);
    expect(htmlAndPdf('binary/octet-stream', 'https://h.org/download?id=3')).toBe(true);
    expect(htmlAndPdf(undefined, 'https://h.org/download?id=3')).toBe(true);
    expect(htmlAndPdf('image/png', 'https://h.org/download?id=3')).toBe(false);

    // No type the crawl asks for has a signature: generic bytes are refused on the headers too.
    const htmlAndMarkdown = acceptResponseFor(['html', 'markdown']);
    expect(htmlAndMarkdown('text/plain', 'https://h.org/README.md')).toBe(true);
    expect(htmlAndMarkdown('text/plain', 'https://h.org/notes.txt')).toBe(false);
    expect(htmlAndMarkdown('application/octet-stream', 'https://h.org/download?id=3')).toBe(false);
    expect(htmlAndMarkdown('application/octet-stream', 'https://h.org/page')).toBe(false);
    // No type at all may still be a page: read, to be sniffed as a browser would.
    expect(htmlAndMarkdown(undefined, 'https://h.org/page')).toBe(true);
    expect(acceptResponseFor(['markdown'])(undefined, 'https://h.org/page')).toBe(false);
    expect(acceptResponseFor(['html'])('application/pdf', 'https://h.org/r.pdf')).toBe(false);
  });

  it('tells a response by its type, and by its URL for text/plain and octet-stream', () => {
    expect(responseKindOf('text/html', 'https://h.org/a')).toBe('html');
    expect(responseKindOf('application/pdf', 'https://h.org/a')).toBe('pdf');
    expect(responseKindOf('text/plain', 'https://h.org/README.md')).toBe('markdown');
    expect(responseKindOf('text/plain', 'https://h.org/notes.txt')).toBe('text');
    expect(responseKindOf('application/octet-stream', 'https://h.org/r.pdf')).toBe('pdf');
    expect(responseKindOf('application/octet-stream', 'https://h.org/blob')).toBeUndefined();
    expect(responseKindOf('binary/octet-stream', 'https://h.org/r.md')).toBe('markdown');
  });

  it('refuses a kind the crawl did not ask for, and a PDF cut at the body cap', () => {
    expect(admitResponseKind(ok('text/plain', 'https://h.org/n.txt'), ['html', 'markdown'], 100).kind).toBe(
      'unsupported-content-type',
    );
    expect(admitResponseKind(ok('text/plain', 'https://h.org/n.md'), ['html', 'markdown'], 100).kind).toBe(
      'ok',
    );
    expect(admitResponseKind(ok('application/octet-stream', 'https://h.org/blob'), ['pdf'], 100).kind).toBe(
      'unsupported-content-type',
    );
    const cut = admitResponseKind(ok('application/pdf', 'https://h.org/r.pdf', true), ['pdf'], 100);
    expect(cut).toMatchObject({ kind: 'too-large', limitBytes: 100 });
    // Text cut at the cap is still text: kept, as HTML is.
    expect(admitResponseKind(ok('text/plain', 'https://h.org/n.txt', true), ['text'], 100).kind).toBe('ok');
  });

  it('refuses binary data served as HTML, marked as such, and keeps a page with a stray NUL', () => {
    const noise = Array.from({ length: 4096 }, (_, i) => String.fromCharCode((i * 131 + 7) % 256)).join('');
    const refused = admitResponseKind(ok('text/html', 'https://h.org/a.html', false, noise), ['html'], 1e6);
    expect(refused).toMatchObject({
      kind: 'unsupported-content-type',
      contentType: 'text/html',
      binary: true,
    });
    const page = '<html><body><p>Runner beans climb fast.\u0000</p></body></html>';
    expect(admitResponseKind(ok('text/html', 'https://h.org/b.html', false, page), ['html'], 1e6).kind).toBe(
      'ok',
    );
  });

  it('takes a body sent without a Content-Type as a page when it opens like HTML, as browsers do', () => {
    const url = 'https://h.org/cgi-bin/page';
    const untyped = (text: string, type = '') => ok(type, url, false, text);
    const page =
      '\n  <!DOCTYPE html><html><head><title>Runner beans</title></head><body><p>Climb.</p></body></html>';
    for (const type of ['', 'unknown/unknown', 'application/unknown', '*/*']) {
      expect(admitResponseKind(untyped(page, type), ['html', 'pdf'], 1e6)).toMatchObject({
        kind: 'ok',
        contentType: 'text/html',
      });
    }
    for (const start of ['<html lang="en">', '<HEAD>', '<p>Hi</p>', '<!-- c -->', '<body>']) {
      expect(admitResponseKind(untyped(start), ['html'], 1e6).kind, start).toBe('ok');
    }
    // Text that only mentions a tag, a tag the standard does not list, and a crawl without HTML.
    for (const other of ['Runner beans <html>', '<progress>', '<Abbr>', '{"html": "<p>"}', '<p']) {
      expect(admitResponseKind(untyped(other), ['html'], 1e6).kind, other).toBe('unsupported-content-type');
    }
    expect(admitResponseKind(untyped(page), ['markdown', 'pdf'], 1e6).kind).toBe('unsupported-content-type');
    // octet-stream is a download to a browser too, never a page.
    expect(admitResponseKind(untyped(page, 'application/octet-stream'), ['html'], 1e6).kind).toBe(
      'unsupported-content-type',
    );
  });

  it('takes octet-stream at a URL that says nothing by its bytes, under the sniffed media type', () => {
    const pdf = readFileSync(path.join(FIXTURES, 'field-guide.pdf'));
    const docx = readFileSync(path.join(FIXTURES, 'greenhouse-handbook.docx'));
    const url = 'https://h.org/download?id=3';
    const asBytes = (type: string, body: Buffer, truncated = false) => ok(type, url, truncated, '', body);
    for (const type of ['application/octet-stream', 'binary/octet-stream', '']) {
      const admitted = admitResponseKind(asBytes(type, pdf), ['html', 'pdf'], 1e6);
      expect(admitted).toMatchObject({ kind: 'ok', contentType: 'application/pdf' });
      expect(admitted.kind === 'ok' && admitted.body === pdf).toBe(true);
    }
    expect(admitResponseKind(asBytes('application/octet-stream', docx), ['docx'], 1e6)).toMatchObject({
      kind: 'ok',
      contentType: DOCX_MIME,
    });
    // A PDF the crawl did not ask for, and bytes that are no document, keep their own type.
    expect(admitResponseKind(asBytes('application/octet-stream', pdf), ['html', 'docx'], 1e6)).toMatchObject({
      kind: 'unsupported-content-type',
      contentType: 'application/octet-stream',
    });
    const zip = Buffer.from('PK\x03\x04 and nothing a Word file holds');
    expect(admitResponseKind(asBytes('application/octet-stream', zip), ['pdf', 'docx'], 1e6).kind).toBe(
      'unsupported-content-type',
    );
    // Only a generic type is sniffed: a PDF served as text/plain at a bare URL is text.
    expect(admitResponseKind(ok('text/plain', url, false, '', pdf), ['pdf'], 1e6).kind).toBe(
      'unsupported-content-type',
    );
    const cut = admitResponseKind(
      asBytes('application/octet-stream', pdf.subarray(0, 100), true),
      ['pdf'],
      100,
    );
    expect(cut).toMatchObject({ kind: 'too-large', limitBytes: 100 });
  });
});
