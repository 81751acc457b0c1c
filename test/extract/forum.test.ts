/**
 * Forum threads: what around each post is not what its author wrote. Generated pages, one structure
 * each; the WCXB bench measures them at scale (bench:extract).
 */
import { describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { page, prose } from './generated-page';

describe('forum posts', () => {
  it("drops each post's signature and poster card, keeping what the posters wrote", () => {
    const posts = Array.from(
      { length: 6 },
      (_, i) =>
        `<article class="message">` +
        `<div class="message-userDetails"><h4>poster${i}</h4><h5 class="userTitle">Cardmarker title</h5></div>` +
        `<div class="message-userExtras"><dl><dt>Joined</dt><dd>Cardmarker date</dd><dt>Messages</dt><dd>1,234</dd></dl></div>` +
        `<div class="message-content"><p>${prose(`postmarker${i}`, 60)}</p></div>` +
        `<aside class="message-signature"><p>Signaturemarker my rig and my motto</p></aside>` +
        `</article>`,
    ).join('');
    const result = extractPage(
      page(`<main><h1>Which telescope?</h1>${posts}</main>`),
      'http://127.0.0.1/t/1',
    );
    for (let i = 0; i < 6; i++) expect(result.text).toContain(`postmarker${i}`);
    expect(result.text).not.toContain('Signaturemarker');
    expect(result.text).not.toContain('Cardmarker');
  });

  it("drops each post's action links and the thread's counters, keeping text that only starts like one", () => {
    const posts = Array.from(
      { length: 6 },
      (_, i) =>
        `<article class="message"><div class="message-content"><p>${prose(`postmarker${i}`, 60)}</p></div>` +
        `<div class="actions"><a href="/r/${i}">Reply with quote</a> <a href="/p/${i}">Permalink</a> <span>(edited)</span> <a href="/c/${i}">Add a comment</a></div>` +
        `</article>`,
    ).join('');
    const html = page(
      `<main><h1>Which telescope?</h1><div class="meta"><span>Thread starter</span> <span>Start date</span></div>${posts}<p>Permalinkmarker is fine.</p></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/t/2');
    for (let i = 0; i < 6; i++) expect(result.text).toContain(`postmarker${i}`);
    for (const control of ['Reply with quote', '(edited)', 'Add a comment', 'Thread starter'])
      expect(result.text).not.toContain(control);
    expect(result.text).not.toMatch(/^Permalink$/m);
    expect(result.text).toContain('Permalinkmarker is fine.');
  });

  it('drops the list of similar threads under the thread', () => {
    const posts = Array.from(
      { length: 4 },
      (_, i) =>
        `<article class="message"><div class="message-content"><p>${prose(`postmarker${i}`, 60)}</p></div></article>`,
    ).join('');
    const similar = Array.from(
      { length: 5 },
      (_, i) => `<li><a href="/t/${i + 10}">${prose(`othermarker${i}`, 8)}</a> <span>Replies 4</span></li>`,
    ).join('');
    const html = page(
      `<main><h1>Which telescope?</h1>${posts}<div class="block"><h3>Similar threads</h3><ul>${similar}</ul></div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/t/3');
    for (let i = 0; i < 4; i++) expect(result.text).toContain(`postmarker${i}`);
    expect(result.text).not.toContain('othermarker');
    expect(result.text).not.toContain('Similar threads');
  });

  it("drops a poster's initials drawn as an avatar, keeping short words elsewhere", () => {
    const posts = Array.from(
      { length: 5 },
      (_, i) =>
        `<article class="post"><a class="user-avatar" href="/u/${i}"><span>Q${i}</span></a>` +
        `<div class="content"><p>${prose(`postmarker${i}`, 60)}</p><p>OK</p></div></article>`,
    ).join('');
    const result = extractPage(
      page(`<main><h1>Which telescope?</h1>${posts}</main>`),
      'http://127.0.0.1/t/4',
    );
    for (let i = 0; i < 5; i++) {
      expect(result.text).toContain(`postmarker${i}`);
      expect(result.text).not.toMatch(new RegExp(`^Q${i}$`, 'm'));
    }
    expect(result.text).toMatch(/^OK$/m);
  });

  it('drops a post control written across indented lines of markup', () => {
    const pad = `\n${' '.repeat(40)}`;
    const posts = Array.from(
      { length: 5 },
      (_, i) =>
        `<div class="answer"><p>${prose(`postmarker${i}`, 60)}</p>` +
        `<div class="comments-link"><a href="/c/${i}">${pad}Add a comment${pad}</a></div></div>`,
    ).join('');
    const result = extractPage(
      page(`<main><h1>Which telescope?</h1>${posts}</main>`),
      'http://127.0.0.1/q/5',
    );
    for (let i = 0; i < 5; i++) expect(result.text).toContain(`postmarker${i}`);
    expect(result.text).not.toContain('Add a comment');
  });

  it("drops a thread's counters and state labels, keeping counts that say more", () => {
    const posts = Array.from(
      { length: 5 },
      (_, i) =>
        `<div class="post"><p>${prose(`postmarker${i}`, 60)}</p><div class="stats"><span>${i + 3} likes</span> <span>Posts: 1,2${i}4</span></div></div>`,
    ).join('');
    const header =
      '<div class="topic-stats"><div>Replies</div><div>Views</div><div>Posters</div><div>Pinned</div><div>Locked</div></div>';
    const html = page(
      `<main><h1>Which telescope?</h1>${header}${posts}<p>42 likes and views of the comet.</p></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/t/6');
    for (let i = 0; i < 5; i++) expect(result.text).toContain(`postmarker${i}`);
    for (const counter of ['3 likes', 'Posts: 1,204', 'Replies', 'Views', 'Posters', 'Pinned', 'Locked'])
      expect(result.text).not.toContain(counter);
    expect(result.text).toContain('42 likes and views of the comet.');
  });
});
