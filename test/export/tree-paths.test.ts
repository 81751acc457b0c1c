/** Where pages land in the export tree, and how links are rewritten between them. */
import { describe, expect, it } from 'vitest';
import { markdownTargets, rewriteMarkdownLinks } from '../../export/markdown-links';
import { assignPagePaths, naturalPagePath, relativeLink, truncateUtf8 } from '../../export/tree-paths';

describe('export tree paths', () => {
  it('mirrors the URL path: / is index.md, page extensions become .md, queries a stable suffix', () => {
    expect(naturalPagePath('https://docs.example.com/')).toBe('docs.example.com/index.md');
    expect(naturalPagePath('https://docs.example.com/a/b.html')).toBe('docs.example.com/a/b.md');
    expect(naturalPagePath('https://docs.example.com/a/b/')).toBe('docs.example.com/a/b/index.md');
    expect(naturalPagePath('http://127.0.0.1:8000/x')).toBe('127.0.0.1_8000/x.md');
    expect(naturalPagePath('https://h.org/notes.txt')).toBe('h.org/notes.txt.md');
    // Documents: a Markdown file keeps its one .md, a PDF its own extension before the .md.
    expect(naturalPagePath('https://h.org/docs/pond-care.md')).toBe('h.org/docs/pond-care.md');
    expect(naturalPagePath('https://h.org/docs/report.pdf')).toBe('h.org/docs/report.pdf.md');
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

  it('caps every name in UTF-8 bytes, cut on a character boundary, distinct and stable', () => {
    const cjk = '漢'.repeat(100); // 100 characters, 300 bytes: over the 255-byte name limit
    const a = naturalPagePath(`https://h.org/docs/${encodeURIComponent(cjk)}`);
    const b = naturalPagePath(`https://h.org/docs/${encodeURIComponent(`${cjk}二`)}`);
    for (const file of [a, b]) {
      for (const segment of file.split('/'))
        expect(Buffer.byteLength(segment, 'utf8')).toBeLessThanOrEqual(255);
      expect(file).not.toContain('\uFFFD');
      expect(file).toMatch(/^h\.org\/docs\/漢+--[0-9a-f]{10}\.md$/);
    }
    expect(a).not.toBe(b);
    expect(naturalPagePath(`https://h.org/docs/${encodeURIComponent(cjk)}`)).toBe(a);
    // Two-byte and four-byte characters are never split either.
    expect(truncateUtf8('é'.repeat(10), 5)).toBe('éé');
    expect(truncateUtf8('😀😀', 7)).toBe('😀');
    // With a query suffix and a collision suffix the name still fits.
    const long = `https://h.org/${encodeURIComponent('語'.repeat(300))}?q=1`;
    const paths = assignPagePaths([long, `${long}`.replace('?q=1', '?q=1&'), long.toUpperCase()]);
    for (const file of paths.values())
      for (const segment of file.split('/'))
        expect(Buffer.byteLength(segment, 'utf8')).toBeLessThanOrEqual(255);
  });

  it('renames a file that stands where a folder is needed, the same in any order', () => {
    const urls = [
      'https://h.org/a',
      'https://h.org/a.md/x',
      'https://h.org/b/',
      'https://h.org/b/index.md/y',
    ];
    const one = assignPagePaths(urls);
    const two = assignPagePaths([...urls].reverse());
    expect(one).toEqual(two);
    const files = [...one.values()];
    const folders = new Set(
      files
        .flatMap((f) =>
          f
            .split('/')
            .slice(1, -1)
            .map((_, i, all) => all.slice(0, i + 1).join('/')),
        )
        .map((f) => `h.org/${f}`),
    );
    for (const file of files) expect(folders.has(file)).toBe(false);
    expect(one.get('https://h.org/a.md/x')).toBe('h.org/a.md/x.md');
    expect(one.get('https://h.org/a')).toMatch(/^h\.org\/a--[0-9a-f]{10}\.md$/);
    expect(one.get('https://h.org/b/')).toMatch(/^h\.org\/b\/index--[0-9a-f]{10}\.md$/);
    // A host may not take the name of a file the export writes at its root.
    expect(naturalPagePath('http://llms.txt/')).toBe('llms.txt_host/index.md');
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
