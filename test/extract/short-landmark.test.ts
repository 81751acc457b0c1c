/**
 * A page whose `<main>` (or `<article>`, `role="main"`) is shorter than the chain's word minimum: its
 * landmark is the content, not Readability's pick from the site footer. A short page's content is
 * short, and that is what the quality gate needs to see (near-empty, soft-404). Pages written by hand
 * (the not-found page is a user's report) or generated from filler prose with marker words.
 */
import { describe, expect, it } from 'vitest';
import { judgeQuality } from '../../domain/quality-gate';
import { simhash } from '../../domain/simhash';
import { extractPage } from '../../extract';
import { page, prose } from './generated-page';

const NAV =
  '<header><nav><a href="/">Home</a> <a href="/guide/">Guide</a> <a href="/about">About</a></nav></header>';
const FOOTER =
  '<footer><h2>About Flibbertigibbet Holdings</h2><p>Flibbertigibbet Holdings publishes the Zanzibar ' +
  'quarterly newsletter for gardeners and soil scientists everywhere, with columns on compost, mulching ' +
  'and seasonal planting, since 1998.</p></footer>';

const shortPage = (title: string, main: string) =>
  `<html><head><title>${title}</title></head><body>\n${NAV}\n${main}\n${FOOTER}\n</body></html>`;

const NOT_FOUND = shortPage(
  'Page not found',
  '<main><article><h1>Page not found</h1><p>Sorry, the page you were looking for could not be found. ' +
    'Try the home page.</p></article></main>',
);
const COMING_SOON = shortPage('Coming soon', '<main><p>Coming soon.</p></main>');

function verdict(result: ReturnType<typeof extractPage>, title: string) {
  return judgeQuality({
    status: 200,
    title,
    text: result.text,
    wordCount: result.metadata.wordCount,
    simhash: simhash(result.text),
  });
}

describe('a short landmark beside a wordier site footer', () => {
  it("keeps a not-found page's <main> and drops the footer", () => {
    const result = extractPage(NOT_FOUND, 'http://127.0.0.1:8931/soft404.html');
    expect(result.strategy).toBe('selector:main');
    expect(result.markdown).toContain('Sorry, the page you were looking for could not be found.');
    expect(result.markdown).not.toContain('Flibbertigibbet');
    expect(result.markdown).not.toContain('Zanzibar');
    // The text alone says "not found", whatever the title says.
    expect(verdict(result, 'Garden Notes').flags).toEqual(['soft-404']);
  });

  it('keeps a "Coming soon." <main>, so the page is near-empty and the footer is not indexed', () => {
    const result = extractPage(COMING_SOON, 'http://127.0.0.1:8931/soon.html');
    expect(result.text).toBe('Coming soon.');
    expect(result.markdown).toContain('Coming soon.');
    expect(result.markdown).not.toContain('Flibbertigibbet');
    expect(verdict(result, 'Coming soon').flags).toEqual(['near-empty']);
  });

  it('does the same for role="main" and a lone <article>', () => {
    for (const main of [
      '<div role="main"><p>landmarkmarker This section is being rewritten.</p></div>',
      '<article><p>landmarkmarker This section is being rewritten.</p></article>',
    ]) {
      const result = extractPage(shortPage('Rewrite', main), 'http://127.0.0.1:8931/rewrite.html');
      expect(result.text).toContain('landmarkmarker');
      expect(result.text).not.toContain('Flibbertigibbet');
    }
  });

  it('drops a pick from an <aside> too', () => {
    const html = page(
      '<main><h1>Opening hours</h1><p>landmarkmarker Open daily from nine.</p></main>' +
        `<aside class="promo"><p>${prose('asidemarker', 40)}</p></aside>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/hours');
    expect(result.text).toContain('landmarkmarker');
    expect(result.text).not.toContain('asidemarker');
  });
});

describe('a short landmark that is not the content', () => {
  it("lets Readability's pick outside the page's chrome answer", () => {
    // A `role="main"` banner and the page's text in a plain container beside it.
    const paragraphs = Array.from({ length: 5 }, (_, i) => `<p>${prose(`bodymarker${i}`, 60)}</p>`).join('');
    const html = page(
      '<div role="main" class="hero"><h1>Marketing tools</h1><p>Grow your business today.</p></div>' +
        `<div class="sections">${paragraphs}</div>${FOOTER}`,
    );
    const result = extractPage(html, 'http://127.0.0.1/');
    expect(result.text).toContain('bodymarker0');
    expect(result.text).toContain('bodymarker4');
  });
});
