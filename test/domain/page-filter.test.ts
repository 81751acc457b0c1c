import { describe, expect, it } from 'vitest';
import { isCrawlable } from '../../domain/crawlable';
import { hasNonPageExtension } from '../../domain/page-filter';

const everywhere = () => true;

describe('non-page extensions and the crawl content types', () => {
  it('skips .pdf and .docx unless the crawl fetches those documents', () => {
    expect(hasNonPageExtension('https://h.org/report.pdf')).toBe(true);
    expect(hasNonPageExtension('https://h.org/report.pdf', ['html'])).toBe(true);
    expect(hasNonPageExtension('https://h.org/report.PDF', ['html', 'pdf'])).toBe(false);
    expect(hasNonPageExtension('https://h.org/handbook.docx', ['pdf'])).toBe(true);
    expect(hasNonPageExtension('https://h.org/handbook.docx', ['docx'])).toBe(false);
    // Other files stay skipped whatever the crawl fetches.
    expect(hasNonPageExtension('https://h.org/a.zip', ['html', 'pdf', 'markdown', 'text', 'docx'])).toBe(
      true,
    );
    expect(hasNonPageExtension('https://h.org/notes.md')).toBe(false);
  });

  it("leaves out Sphinx's raw source twins of pages, whatever the content types", () => {
    const all = ['html', 'pdf', 'markdown', 'text', 'docx'];
    expect(isCrawlable('https://h.org/_sources/modules/index.rst.txt', everywhere, all)).toBe(false);
    expect(isCrawlable('https://h.org/en/latest/_sources/guide.md.txt', everywhere, all)).toBe(false);
    // A text file elsewhere, or a page under a folder of that name, is still crawled.
    expect(isCrawlable('https://h.org/notes/changes.txt', everywhere, all)).toBe(true);
    expect(isCrawlable('https://h.org/_sources/index.html', everywhere, all)).toBe(true);
  });

  it('leaves out robots.txt and the other files an origin keeps for machines', () => {
    const all = ['html', 'pdf', 'markdown', 'text', 'docx'];
    for (const url of [
      'https://h.org/robots.txt',
      'https://h.org/ads.txt',
      'https://h.org/app-ads.txt',
      'https://h.org/.well-known/security.txt',
    ]) {
      expect(isCrawlable(url, everywhere, all), url).toBe(false);
    }
    // Files of those names that are not the origin's own are text like any other.
    expect(isCrawlable('https://h.org/docs/robots.txt', everywhere, all)).toBe(true);
    expect(isCrawlable('https://h.org/robots.txt.html', everywhere, all)).toBe(true);
  });

  it('isCrawlable passes the content types on', () => {
    expect(isCrawlable('https://h.org/report.pdf', everywhere)).toBe(false);
    expect(isCrawlable('https://h.org/report.pdf', everywhere, ['pdf'])).toBe(true);
  });
});
