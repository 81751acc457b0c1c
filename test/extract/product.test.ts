/**
 * Product pages and other-products blocks: priced card groups around one product, "people who viewed
 * this item also viewed" rails, and a stray `<![CDATA[` that must not swallow a page. Pages are
 * generated here from filler prose with marker words, one structure per test; the WCXB bench measures
 * the rules at scale (bench:extract).
 */
import { describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { dropHtmlCdata } from '../../extract/extract-page';
import { isProductPage, PRICE } from '../../extract/product';
import { mayHaveStreamedSegments } from '../../extract/streamed-segments';
import { page, prose } from './generated-page';

const productLd = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail pack","offers":{"@type":"Offer","price":"89.00","priceCurrency":"USD"}}</script>`;

/** `n` cards of other products, each a linked name and a price. */
function cards(n: number, marker: string): string {
  return Array.from(
    { length: n },
    (_, i) =>
      `<li class="tile tile-${i}"><a href="/p/${i}">${marker}${i} daypack in green</a><span class="price">$${40 + i}.99</span></li>`,
  ).join('');
}

describe('product pages', () => {
  it('recognises one product from JSON-LD or og:type, and not a catalogue of them', () => {
    expect(isProductPage([`{"@type":"Product","name":"x"}`], 'product')).toBe(true);
    expect(isProductPage([], 'product')).toBe(true);
    expect(isProductPage([], 'article')).toBe(false);
    const many = Array.from({ length: 5 }, (_, i) => `{"@type":"Product","name":"p${i}"}`).join(',');
    expect(isProductPage([`[${many}]`], 'webpage')).toBe(false);
    expect(isProductPage([`{"@type":"ItemList","itemListElement":[{"@type":"Product"}]}`], 'webpage')).toBe(
      false,
    );
  });

  it('reads prices in the usual shapes and not plain numbers', () => {
    for (const price of ['$35.00', '£ 675', '12,99 €', 'EUR 10.37', '1.299 kr'])
      expect(PRICE.test(price)).toBe(true);
    for (const text of ['Size 10', '22 medium jumbo frets', 'Model 2024'])
      expect(PRICE.test(text)).toBe(false);
  });

  it('drops groups of other products’ priced cards and keeps the product’s own text', () => {
    const html = page(
      `<main><h1>Trail pack</h1><p class="price">$89.00</p><p>${prose('descriptionmarker', 80)}</p>` +
        `<ul class="specs"><li>Volume: 25 litres</li><li>Weight: 900 g</li><li>Frame: aluminium</li></ul>` +
        `<h2>Other colours</h2><ul class="variants">${cards(6, 'variantmarker')}</ul></main>`,
      productLd,
    );
    const result = extractPage(html, 'http://127.0.0.1/p/trail-pack');
    expect(result.text).toContain('descriptionmarker');
    expect(result.text).toContain('Volume: 25 litres');
    expect(result.text).toContain('$89.00');
    expect(result.text).not.toContain('variantmarker');
  });

  it('keeps priced cards on a page that is not a product page', () => {
    const html = page(
      `<main><h1>Daypacks</h1><p>${prose('intromarker', 30)}</p><ul class="grid">${cards(8, 'cardmarker')}</ul></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/c/daypacks');
    for (let i = 0; i < 8; i++) expect(result.text).toContain(`cardmarker${i}`);
  });

  it('keeps the cards when they are most of a page that calls itself a product', () => {
    const html = page(
      `<main><h1>Daypacks</h1><ul class="grid">${cards(12, 'cardmarker')}</ul></main>`,
      productLd,
    );
    const result = extractPage(html, 'http://127.0.0.1/c/daypacks');
    expect(result.text).toContain('cardmarker11');
  });
});

describe('other-products rails on any page', () => {
  it('drops the block under a "People who viewed this item also viewed" heading', () => {
    const rail = Array.from(
      { length: 5 },
      (_, i) => `<div class="item"><a href="/i/${i}">railmarker${i} blouse size ${10 + i}</a></div>`,
    ).join('');
    const html = page(
      `<main><h1>Blouse</h1><p>${prose('itemmarker', 70)}</p>` +
        `<section class="carousel"><h2>People who viewed this item also viewed</h2>${rail}</section>` +
        `<h2>Item description</h2><p>${prose('detailmarker', 40)}</p></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/item/1');
    expect(result.text).toContain('itemmarker');
    expect(result.text).toContain('detailmarker');
    expect(result.text).not.toContain('railmarker');
    expect(result.text).not.toContain('also viewed');
  });
});

describe('news and blog rails', () => {
  it('drops the link list under a bare "Most popular" heading after an article', () => {
    const links = Array.from(
      { length: 5 },
      (_, i) => `<li><a href="/post/${i}">railmarker${i} other post title</a></li>`,
    ).join('');
    const html = page(
      `<main><article><h1>Zero waste</h1><p>${prose('articlemarker', 120)}</p></article>` +
        `<h3>Most popular</h3><ul>${links}</ul></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/blog/zero-waste');
    expect(result.text).toContain('articlemarker');
    expect(result.text).not.toContain('railmarker');
    expect(result.text).not.toContain('Most popular');
  });
});

describe('a stray <![CDATA[ in HTML content', () => {
  it('is dropped up to the next ">", as browsers do, so the page after it is read', () => {
    expect(dropHtmlCdata('<p>a</p><![CDATA[\n<div id="x"></div>')).toBe('<p>a</p></div>');
    const html = page(
      `<![CDATA[<div class="wrap"><main><h1>Thread</h1><p>${prose('postmarker', 80)}</p></main></div>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/t/1');
    expect(result.text).toContain('postmarker');
  });
});

describe('streamed server-rendered segments', () => {
  it('moves each hidden S:n segment into its B:n or P:n placeholder, as the streaming script would', () => {
    const html = page(
      `<nav><a href="/">Home</a></nav><main><h1>Query tuning</h1><!--$?--><template id="B:0"></template><p>Loading…</p><!--/$--></main>` +
        `<div hidden id="S:0"><article><p>${prose('streamedmarker', 90)}</p><template id="P:1"></template></article></div>` +
        `<div hidden id="S:1"><p>${prose('nestedmarker', 40)}</p></div>` +
        `<div hidden id="S:2"><p>${prose('orphanmarker', 20)}</p></div>` +
        `<div hidden class="drawer"><p>${prose('drawermarker', 20)}</p></div>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/blog/query-tuning');
    expect(result.strategy).toBe('selector:main');
    expect(result.text).toContain('streamedmarker');
    expect(result.text).toContain('nestedmarker');
    expect(result.text.indexOf('streamedmarker')).toBeLessThan(result.text.indexOf('nestedmarker'));
    // A hidden element that is not a streamed segment stays hidden.
    expect(result.text).not.toContain('drawermarker');
  });

  it('leaves a page without streamed segments to the usual hidden-element rule', () => {
    expect(mayHaveStreamedSegments('<div hidden id="panel">x</div>')).toBe(false);
    expect(mayHaveStreamedSegments('<div hidden id="S:0">x</div>')).toBe(true);
  });
});
