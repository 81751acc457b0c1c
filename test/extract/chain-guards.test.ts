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

describe('a link-heavy landmark that is a listing', () => {
  it('keeps the whole list of linked headlines when Readability picks a fragment of it', () => {
    const headlines = Array.from(
      { length: 30 },
      (_, i) =>
        `<p><a href="/news/${i}">headlinemarker${i} storm closes roads across the northern valley</a> 2h</p>`,
    ).join('');
    const html = page(
      `<main><h1>Latest news</h1>${headlines}` +
        `<div class="feature"><p>${prose('fragmentmarker', 160)}</p></div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/news');
    expect(result.strategy).toBe('selector:main');
    expect(result.text).toContain('headlinemarker0');
    expect(result.text).toContain('headlinemarker29');
  });
});

describe('a navigation rail inside the landmark', () => {
  const rail = (n: number) =>
    `<ul>${Array.from({ length: n }, (_, i) => `<li><a href="/guide/${i}">railmarker${i} chapter of the guide</a></li>`).join('')}</ul>`;

  it('drops a sidebar of links that outweighs a short article beside it', () => {
    // The sidebar holds ~75 % of the landmark's text: over the 40 % a chrome-named element may hold.
    const html = page(
      `<main><div class="sidebar">${rail(60)}</div>` +
        `<article><h1>Pond care</h1><p>${prose('pondmarker', 45)}</p><p>${prose('winter', 40)}</p></article></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/pond');
    expect(result.text).toContain('pondmarker');
    expect(result.text).toContain('winter');
    expect(result.text).not.toContain('railmarker');
  });

  it('keeps a table of contents that is the page (a docs index)', () => {
    const html = page(
      `<main><h1>User guide</h1><p>Start here.</p><div class="toctree-wrapper">${rail(40)}</div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/guide/');
    expect(result.text).toContain('railmarker0');
    expect(result.text).toContain('railmarker39');
  });

  it('keeps a related-products section of linked cards that is a listing', () => {
    const cards = Array.from(
      { length: 12 },
      (_, i) =>
        `<div class="card"><a href="/p/${i}">cardmarker${i} quiet robotic mower for small lawns</a></div>`,
    ).join('');
    const html = page(
      `<main><h1>Robotic mowers</h1><p>${prose('intro', 60)}</p><section class="related-product">${cards}</section></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/mowers/');
    expect(result.text).toContain('cardmarker0');
    expect(result.text).toContain('cardmarker11');
  });
});
