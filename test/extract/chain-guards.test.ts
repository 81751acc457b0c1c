/**
 * Limits on the structural and selector rules: a `<header>` that wraps the whole post, and a chain
 * selector that matches a small box beside the real text. Pages are generated from filler prose with
 * marker words (./generated-page); the WCXB bench measures the rules at scale (bench:extract).
 */
import { describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { page, prose } from './generated-page';

describe('header elements', () => {
  it('drops a site header but keeps a <header> that holds most of the page', () => {
    const html = page(
      `<header class="site"><a href="/">Brand</a> <span>sitemarker tagline here</span></header>` +
        `<main><header class="section-post"><p>${prose('postmarker', 150)}</p><p>${prose('moremarker', 120)}</p></header></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/blog/post');
    expect(result.text).toContain('postmarker');
    expect(result.text).toContain('moremarker');
    expect(result.text).not.toContain('sitemarker');
  });
});

describe('a chain pick that is a sliver of the page', () => {
  it('lets Readability answer when the selector matched a small box beside the article', () => {
    const paragraphs = Array.from({ length: 8 }, (_, i) => `<p>${prose(`articlemarker${i}`, 80)}</p>`).join(
      '',
    );
    const html = page(
      `<div class="layout"><div class="entry"><h1>Best grinders</h1>${paragraphs}</div>` +
        `<div class="side"><div id="content"><p>${prose('authormarker', 60)}</p></div></div></div>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/gear/grinders');
    expect(result.strategy).toBe('readability');
    expect(result.text).toContain('articlemarker0');
    expect(result.text).toContain('articlemarker7');
  });

  it('keeps a short chain pick that is the page', () => {
    const html = page(`<a href="/">Home</a><div id="content"><p>${prose('onlymarker', 70)}</p></div>`);
    const result = extractPage(html, 'http://127.0.0.1/note');
    expect(result.strategy).toBe('selector:#content');
    expect(result.text).toContain('onlymarker');
  });
});
