/**
 * Which responses a crawl takes by its `contentTypes`: the media types asked of fetchPage, what a
 * response is by its type and URL, and the ones refused after all (a kind not asked for, a binary
 * document cut at the body cap).
 */
import { describe, expect, it } from 'vitest';
import { admitResponseKind, mediaTypesFor, responseKindOf } from '../../../activities/http/fetch-options';
import type { FetchPageResult } from '../../../activities/http/fetch-result';

function ok(contentType: string, url: string, truncated = false, text = 'x'): FetchPageResult {
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
    body: Buffer.from(text),
    text,
    charset: 'utf-8',
    contentType,
    ...(truncated ? { truncated: true } : {}),
  };
}

describe('response kinds and the crawl content types', () => {
  it('asks fetchPage for the media types of the kinds named', () => {
    expect(mediaTypesFor(['html'])).toEqual(['text/html', 'application/xhtml+xml']);
    expect(mediaTypesFor(['html', 'pdf'])).toEqual(
      expect.arrayContaining(['text/html', 'application/pdf', 'application/octet-stream']),
    );
    expect(mediaTypesFor(['text'])).toEqual(['text/plain']);
  });

  it('tells a response by its type, and by its URL for text/plain and octet-stream', () => {
    expect(responseKindOf('text/html', 'https://h.org/a')).toBe('html');
    expect(responseKindOf('application/pdf', 'https://h.org/a')).toBe('pdf');
    expect(responseKindOf('text/plain', 'https://h.org/README.md')).toBe('markdown');
    expect(responseKindOf('text/plain', 'https://h.org/notes.txt')).toBe('text');
    expect(responseKindOf('application/octet-stream', 'https://h.org/r.pdf')).toBe('pdf');
    expect(responseKindOf('application/octet-stream', 'https://h.org/blob')).toBeUndefined();
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
});
