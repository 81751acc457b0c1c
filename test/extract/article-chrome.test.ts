/**
 * What news and blog templates put inside an article's container (captions, credits, share links,
 * bylines, comment threads) goes; the same shapes stay where they are content: a listing's cards
 * each with a date, a grid of linked figure cards, numbered figure captions, a forum thread's
 * replies. Generated pages, one structure each; the golden pages (golden.test.ts) show whole articles.
 */
import { describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { page, prose } from './generated-page';

const URL = 'http://127.0.0.1/a/1';

describe('article chrome', () => {
  it('drops captions, credits, share links and the byline around an article', () => {
    const html = page(
      `<main><article><h1>Title</h1><p>By Jane Roe</p><p><time>March 3, 2025</time></p><p>5 min read</p>` +
        `<p>${prose('bodymarker1', 80)}</p>` +
        `<figure><img src="a.jpg" alt=""><figcaption>Captionmarker a view of the harbour. Photo: John Doe/Reuters</figcaption></figure>` +
        `<p>${prose('bodymarker2', 80)}</p><p>(AP Photo/Sam Smith)</p>` +
        `<div><a href="https://www.facebook.com/sharer/sharer.php?u=x">Sharemarker</a> <a href="https://twitter.com/intent/tweet?url=x">Tweetmarker</a> <span>Copy link</span></div>` +
        `</article></main>`,
    );
    const { text } = extractPage(html, URL);
    expect(text).toContain('bodymarker1');
    expect(text).toContain('bodymarker2');
    for (const gone of [
      'Jane Roe',
      'March 3',
      'min read',
      'Captionmarker',
      'AP Photo',
      'Sharemarker',
      'Tweetmarker',
      'Copy link',
    ])
      expect(text).not.toContain(gone);
  });

  it('keeps the dates of a listing, where every card carries one', () => {
    const cards = Array.from(
      { length: 8 },
      (_, i) =>
        `<li><h3><a href="/p/${i}">Post ${i}</a></h3><p>${prose(`cardmarker${i}`, 25)}</p><p>Updated ${i + 2} days ago</p></li>`,
    ).join('');
    const { text } = extractPage(page(`<main><h1>All posts</h1><ul>${cards}</ul></main>`), URL);
    for (let i = 0; i < 8; i++) {
      expect(text).toContain(`cardmarker${i}`);
      expect(text).toContain(`Updated ${i + 2} days ago`);
    }
  });

  it('keeps linked figure cards and numbered figure captions', () => {
    const cards = Array.from(
      { length: 6 },
      (_, i) =>
        `<figure><img src="/i/${i}.jpg" alt=""><figcaption><a href="/item/${i}">Itemmarker${i} lamp</a></figcaption></figure>`,
    ).join('');
    const html = page(
      `<main><h1>Lamps</h1><p>${prose('intromarker', 60)}</p><div class="grid">${cards}</div>` +
        `<figure><img src="/chart.png" alt=""><figcaption>Figure 2. Latency against batch size</figcaption></figure>` +
        `<p>${prose('outromarker', 60)}</p></main>`,
    );
    const { text } = extractPage(html, URL);
    for (let i = 0; i < 6; i++) expect(text).toContain(`Itemmarker${i}`);
    expect(text).toContain('Figure 2. Latency against batch size');
  });

  it('drops a comment thread that names the post even when it is longer than the post', () => {
    const replies = Array.from(
      { length: 10 },
      (_, i) =>
        `<li><cite>Reader ${i}</cite> says:<p>${prose(`replymarker${i}`, 70)}</p><a href="?r=${i}">Reply</a></li>`,
    ).join('');
    const html = page(
      `<div class="wrap"><div class="post"><h1>My post</h1><p>${prose('postmarker', 90)}</p></div>` +
        `<div class="thread"><h3>10 Responses to “My post”</h3><ol>${replies}</ol></div></div>`,
    );
    const { text } = extractPage(html, URL);
    expect(text).toContain('postmarker');
    expect(text).not.toContain('replymarker');
    expect(text).not.toContain('Responses to');
  });

  it('keeps the replies under a bare "Replies" heading when they are most of the page', () => {
    const replies = Array.from(
      { length: 10 },
      (_, i) => `<div class="r"><b>user${i}</b><p>${prose(`replymarker${i}`, 70)}</p></div>`,
    ).join('');
    const html = page(
      `<div class="wrap"><div class="post"><h1>Which lens?</h1><p>${prose('postmarker', 40)}</p></div>` +
        `<div class="thread"><h3>Replies</h3>${replies}</div></div>`,
    );
    const { text } = extractPage(html, URL);
    expect(text).toContain('postmarker');
    for (let i = 0; i < 10; i++) expect(text).toContain(`replymarker${i}`);
  });
});
