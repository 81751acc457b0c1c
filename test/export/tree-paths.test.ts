/** Where pages land in the export tree, and how links are rewritten between them. */
import { describe, expect, it } from 'vitest';
import { markdownTargets, rewriteMarkdownLinks } from '../../export/markdown-links';
import { assignPagePaths, naturalPagePath, relativeLink } from '../../export/tree-paths';

describe('export tree paths', () => {
  it('mirrors the URL path: / is index.md, page extensions become .md, queries a stable suffix', () => {
    expect(naturalPagePath('https://docs.example.com/')).toBe('docs.example.com/index.md');
    expect(naturalPagePath('https://docs.example.com/a/b.html')).toBe('docs.example.com/a/b.md');
    expect(naturalPagePath('https://docs.example.com/a/b/')).toBe('docs.example.com/a/b/index.md');
    expect(naturalPagePath('http://127.0.0.1:8000/x')).toBe('127.0.0.1_8000/x.md');
    expect(naturalPagePath('https://h.org/notes.txt')).toBe('h.org/notes.txt.md');
    expect(naturalPagePath('https://h.org/a%20b/c%3Fd.html')).toBe('h.org/a b/c_d.md');
    expect(naturalPagePath('https://h.org/_assets/x.html')).toBe('h.org/_assets-page/x.md');
    const q1 = naturalPagePath('https://h.org/list?page=2');
    expect(q1).toMatch(/^h\.org\/list--q-[0-9a-f]{10}\.md$/);
    expect(naturalPagePath('https://h.org/list?page=2')).toBe(q1);
    expect(naturalPagePath('https://h.org/list?page=3')).not.toBe(q1);
  });

  it('settles collisions by URL order, the same way whatever order the URLs come in', () => {
    const urls = ['https://h.org/a/index.html', 'https://h.org/a/'];
    const one = assignPagePaths(urls);
    const two = assignPagePaths([...urls].reverse());
    expect(one).toEqual(two);
    expect(one.get('https://h.org/a/')).toBe('h.org/a/index.md');
    expect(one.get('https://h.org/a/index.html')).toMatch(/^h\.org\/a\/index--[0-9a-f]{10}\.md$/);
  });

  it('makes relative, escaped links', () => {
    expect(relativeLink('h.org/a/b.md', 'h.org/index.md', '#top')).toBe('../index.md#top');
    expect(relativeLink('h.org/index.md', 'h.org/a b/c.md')).toBe('a%20b/c.md');
  });
});

describe('Markdown link rewriting', () => {
  const md = [
    'See [`gp_minimize`](https://h.org/api.html#gp "title") and [ext](https://other.org/).',
    '[![badge](https://h.org/b.png)](https://h.org/ci.html)',
    '```python',
    'x = "[not](https://h.org/api.html)"',
    '```',
    'Inline `[code](https://h.org/api.html)` and <https://h.org/api.html>.',
    '![plot](/_images/p.png)',
  ].join('\n');

  it('finds links and images outside code, resolving relative ones', () => {
    expect(markdownTargets(md, 'https://h.org/x/page.html')).toEqual([
      { url: 'https://h.org/api.html#gp', image: false },
      { url: 'https://other.org/', image: false },
      { url: 'https://h.org/b.png', image: true },
      { url: 'https://h.org/ci.html', image: false },
      { url: 'https://h.org/_images/p.png', image: true },
      // <autolinks> are read after inline links.
      { url: 'https://h.org/api.html', image: false },
    ]);
  });

  it('rewrites only what the callback answers for, keeping titles and code', () => {
    const out = rewriteMarkdownLinks(md, 'https://h.org/', (t) =>
      t.url.startsWith('https://h.org/') ? `LOCAL:${t.url.slice(14)}` : undefined,
    );
    expect(out).toContain('[`gp_minimize`](LOCAL:api.html#gp "title")');
    expect(out).toContain('[ext](https://other.org/)');
    expect(out).toContain('[![badge](LOCAL:b.png)](LOCAL:ci.html)');
    expect(out).toContain('x = "[not](https://h.org/api.html)"');
    expect(out).toContain('`[code](https://h.org/api.html)`');
    expect(out).toContain('[https://h.org/api.html](LOCAL:api.html)');
    expect(out).toContain('![plot](LOCAL:_images/p.png)');
  });
});
