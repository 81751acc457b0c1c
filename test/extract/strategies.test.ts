/**
 * Extraction strategies beyond one node: repeated posts and cards, reader comments, and pages whose
 * body is empty. Pages are built here so each asserts one structure; the WCXB bench measures them at
 * scale (bench:extract).
 */
import { describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { parseDocument } from '../../extract/dom';
import { findRepeatedGroup } from '../../extract/repeated-blocks';
import { page, prose } from './generated-page';

const siteChrome = `<div class="top"><a href="/">Home</a> <a href="/forums">Forums</a> <a href="/help">Help</a></div>`;

describe('repeated posts and cards', () => {
  it('keeps every post of a thread whose first post sits beside the list of replies', () => {
    const replies = Array.from(
      { length: 8 },
      (_, i) =>
        `<article class="post post-${i}"><div class="user">user${i}</div><div class="body"><p>${prose(`replymarker${i}`, 60)}</p></div></article>`,
    ).join('');
    const html = page(
      `${siteChrome}<div class="thread"><h1>Which telescope?</h1>` +
        `<div class="first-post"><p>${prose('openingmarker', 80)}</p><p>${prose('openingmore', 60)}</p></div>` +
        `<div class="replies">${replies}</div></div>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/thread/1');
    expect(result.strategy).toMatch(/^repeated:article\.post/);
    expect(result.text).toContain('openingmarker');
    for (let i = 0; i < 8; i++) expect(result.text).toContain(`replymarker${i}`);
    expect(result.text).not.toContain('Forums');
    expect(result.confidence).toBeGreaterThan(0);
    expect(result.markdown).toContain('replymarker7');
  });

  it('keeps every card of a listing, title and summary', () => {
    const cards = Array.from(
      { length: 12 },
      (_, i) =>
        `<li class="card"><h3><a href="/item/${i}">Card title ${i}</a></h3><p>${prose(`summarymarker${i}`, 14)}</p></li>`,
    ).join('');
    const html = page(`${siteChrome}<div class="listing"><ul class="cards">${cards}</ul></div>`);
    const result = extractPage(html, 'http://127.0.0.1/list');
    // Readability manages a flat list itself; either way no card may be lost.
    expect(result.strategy).toMatch(/^(?:readability|repeated:li\.card)$/);
    for (let i = 0; i < 12; i++) {
      expect(result.text).toContain(`Card title ${i}`);
      expect(result.text).toContain(`summarymarker${i}`);
    }
  });

  it('leaves a real article alone when a larger related-items rail sits beside it', () => {
    const rail = Array.from(
      { length: 30 },
      (_, i) => `<div class="tile"><a href="/other/${i}">${prose(`railmarker${i}`, 12)}</a></div>`,
    ).join('');
    const html = page(
      `<div class="story"><h1>Story</h1>${Array.from({ length: 6 }, (_, i) => `<p>${prose(`storymarker${i}`, 40)}</p>`).join('')}</div>` +
        `<div class="rail">${rail}</div>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/story');
    expect(result.strategy).toBe('readability');
    expect(result.text).toContain('storymarker5');
    expect(result.text).not.toContain('railmarker3');
  });

  it('does not take a menu of one-word links for repeated content', () => {
    const menu = Array.from(
      { length: 40 },
      (_, i) => `<li class="item"><a href="/m/${i}">Item${i}</a></li>`,
    ).join('');
    const doc = parseDocument(page(`<ul class="menu-list">${menu}</ul>`), undefined, 'linkedom');
    expect(findRepeatedGroup(doc.body)).toBeUndefined();
  });
});

describe('reader comments', () => {
  const comments = Array.from(
    { length: 20 },
    (_, i) =>
      `<li class="comment"><p class="comment-author">reader${i}</p><p>${prose(`commentmarker${i}`, 30)}</p></li>`,
  ).join('');
  const body = `<main><h1>Garden spray</h1>${Array.from({ length: 5 }, (_, i) => `<p>${prose(`articlemarker${i}`, 50)}</p>`).join('')}<div id="comments"><ol class="comment-list">${comments}</ol></div></main>`;

  it('drops the comment section under an article, even when it is longer than the article', () => {
    const result = extractPage(page(body), 'http://127.0.0.1/post');
    expect(result.strategy).toMatch(/^selector:main/);
    expect(result.text).toContain('articlemarker4');
    expect(result.text).not.toContain('commentmarker');
  });

  it('keeps comments on a page that declares itself a discussion', () => {
    const ld = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"DiscussionForumPosting","headline":"Garden spray"}</script>`;
    const result = extractPage(page(body, ld), 'http://127.0.0.1/post');
    expect(result.metadata.contentType).toBe('discussionforumposting');
    expect(result.text).toContain('commentmarker19');
  });
});

describe('customer reviews on a page that sells something', () => {
  const reviews = Array.from(
    { length: 6 },
    (_, i) => `<div class="review-card"><h4>Great buy ${i}</h4><p>${prose(`reviewmarker${i}`, 20)}</p></div>`,
  ).join('');
  const testimonials = `<section class="testimonial-wrap"><div class="review-card"><p>${prose('testimonialmarker', 30)}</p></div></section>`;
  const product = (buy: string) =>
    `<main><h1>Trail pack 25</h1><p>$99.95</p>${buy}` +
    `<div class="description"><h2>Description</h2><p>${prose('descriptionmarker', 60)}</p></div>` +
    `<div id="customerReviews"><h2>Customer reviews</h2>${reviews}</div>${testimonials}</main>`;

  it('drops the reviews when a single buy button says the page sells one thing, keeping testimonials', () => {
    const result = extractPage(page(product('<button>Add to cart</button>')), 'http://127.0.0.1/p/1');
    expect(result.text).toContain('descriptionmarker');
    expect(result.text).not.toContain('reviewmarker');
    expect(result.text).toContain('testimonialmarker');
  });

  it('drops them on a page whose structured data names one Product', () => {
    const ld = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail pack 25"}</script>`;
    const result = extractPage(page(product(''), ld), 'http://127.0.0.1/p/1');
    expect(result.text).toContain('descriptionmarker');
    expect(result.text).not.toContain('reviewmarker');
  });

  it('keeps reviews on a page with no sign of selling one thing, or with a buy button per product', () => {
    expect(extractPage(page(product('')), 'http://127.0.0.1/p/1').text).toContain('reviewmarker5');
    const buttons = '<button>Add to cart</button>'.repeat(3);
    expect(extractPage(page(product(buttons)), 'http://127.0.0.1/p/1').text).toContain('reviewmarker5');
  });
});

describe('lists of links inside prose', () => {
  const links = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => `<li><a href="/${prefix}/${i}">${prefix} topic ${i}</a></li>`).join(
      '',
    );
  const prose3 = Array.from({ length: 6 }, (_, i) => `<p>${prose(`bodymarker${i}`, 60)}</p>`).join('');

  it('drops a block of links in an article (tags, categories, a table of contents) and keeps inline links', () => {
    const body =
      `<main><h1>Pruning roses</h1><ul class="toc">${links('toc', 8)}</ul>${prose3}` +
      `<p>${prose('inlinemarker', 30)} See <a href="/guide">the pruning guide</a> for more.</p>` +
      `<div class="terms"><ul>${links('tag', 12)}</ul></div></main>`;
    const result = extractPage(page(body), 'http://127.0.0.1/roses');
    expect(result.text).toContain('bodymarker5');
    expect(result.text).toContain('the pruning guide');
    expect(result.text).not.toContain('toc topic');
    expect(result.text).not.toContain('tag topic');
  });

  it('keeps the links of a page that is made of links', () => {
    const body = `<main><h1>All topics</h1><p>${prose('intromarker', 20)}</p><ul>${links('entry', 20)}</ul><ul>${links('more', 20)}</ul></main>`;
    const result = extractPage(page(body), 'http://127.0.0.1/topics');
    expect(result.text).toContain('entry topic 19');
    expect(result.text).toContain('more topic 19');
  });
});

describe('pages whose body has no text', () => {
  // Measured: answering with the meta description cost F1 on wcxb-dev (pages whose main content is
  // truly empty outnumber the gain), so an empty body is reported as such.
  it('reports an empty body as empty, with zero confidence, even with a meta description', () => {
    const head =
      '<meta name="description" content="Howdy everyone, I am new to astronomy and want a first telescope.">';
    const result = extractPage(page('<section id="main"></section>', head), 'http://127.0.0.1/t/2');
    expect(result.strategy).toBe('empty');
    expect(result.text).toBe('');
    expect(result.confidence).toBe(0);
  });
});

describe('tabbed examples', () => {
  it('keeps the inactive, hidden tab panels of code examples and still drops other hidden blocks', () => {
    const tabs = ['python', 'node', 'ruby']
      .map(
        (lang, i) =>
          `<div role="tabpanel"${i === 0 ? '' : ' hidden'}><pre><code class="language-${lang}">${lang}_tabmarker()</code></pre></div>`,
      )
      .join('');
    const html = page(
      `<main><h1>Send a message</h1><p>${prose('intromarker', 80)}</p>` +
        `<div role="tablist"><span role="tab">Python</span><span role="tab">Node</span><span role="tab">Ruby</span></div>${tabs}` +
        `<div hidden class="drawer"><p>${prose('drawermarker', 20)}</p></div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/docs/send');
    for (const lang of ['python', 'node', 'ruby']) expect(result.markdown).toContain(`${lang}_tabmarker()`);
    expect(result.text).not.toContain('drawermarker');
  });
});
