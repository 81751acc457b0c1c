/** Text from pages and from LLM summaries reaches llms.txt on one line, with its Markdown and HTML escaped. */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { llmsFullSection, oneLine, renderLlmsTxt } from '../../export/llms-txt';
import { renderPageFile } from '../../export/page-file';

const HOSTILE =
  'Useful page.\n# Injected heading\n\n- [click me](javascript:alert(1)) <img src=x onerror=alert(1)>\u2028## more';

describe('llms.txt escaping', () => {
  it('keeps each entry on its own line with no link, heading or HTML of its own', () => {
    const text = renderLlmsTxt([
      {
        host: 'h.org',
        file: 'h.org/index.md',
        url: 'https://h.org/',
        title: 'Home\n# Evil [x](javascript:alert(2))',
        note: HOSTILE,
        about: HOSTILE,
      },
      {
        host: 'h.org',
        file: 'h.org/a (b).md',
        url: 'https://h.org/a%20(b)',
        title: 'A (plain) title with snake_case',
        note: oneLine('Long summary.\n\nSecond paragraph.'),
        about: undefined,
      },
    ]);
    const lines = text.split('\n');
    // Only the lines the format itself makes: the H1, the blockquote, one section and two entries.
    expect(lines.filter((l) => l.startsWith('#'))).toEqual([
      '# Home # Evil \\[x\\](javascript:alert(2))',
      '## h.org',
    ]);
    expect(lines.filter((l) => l.startsWith('- '))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith('>'))).toHaveLength(1);
    expect(text).not.toMatch(/(^|[^\\])\]\(javascript:/m);
    expect(text).not.toMatch(/(^|[^\\])<img/m);
    expect(text).not.toContain('\u2028');
    // Still readable, and the file link still works.
    expect(text).toContain('- [A (plain) title with snake_case](h.org/a%20%28b%29.md): Long summary.');
  });

  it('leaves a number at the start alone unless it makes a list item (no backslash before a digit)', () => {
    const text = renderLlmsTxt([
      {
        host: '127.0.0.1_8931',
        file: '127.0.0.1_8931/a.md',
        url: 'http://127.0.0.1:8931/a',
        title: '1. Introduction',
        note: undefined,
        about: undefined,
      },
      {
        host: '127.0.0.1_8931',
        file: '127.0.0.1_8931/docs/b.md',
        url: 'http://127.0.0.1:8931/docs/b',
        title: '2) Setup',
        note: undefined,
        about: undefined,
      },
    ]);
    // Before: `## \127.0.0.1_8931`, which CommonMark shows with its backslash.
    expect(text).toContain('\n## 127.0.0.1_8931\n');
    expect(text).toContain('\n## 127.0.0.1_8931/docs\n');
    expect(text).not.toMatch(/\\\d/);
    expect(text).toContain('[1\\. Introduction](');
    expect(text).toContain('[2\\) Setup](');
  });

  it('escapes the titles llms-full.txt puts in headings', () => {
    const section = llmsFullSection(
      { title: 'T\n# x', url: 'https://h.org/', file: 'h.org/index.md' },
      'body',
    );
    expect(section.split('\n').filter((l) => l.startsWith('#'))).toEqual(['## T # x']);
  });

  // Not a regression (the yaml library already did this): the guard that keeps it so.
  it('serialises frontmatter with the yaml library: a hostile summary cannot end it or add keys', () => {
    const summary = `${HOSTILE}\n---\ntitle: forged\n`;
    const file = renderPageFile(
      {
        id: 1,
        url: 'https://h.org/',
        finalUrl: 'https://h.org/',
        origin: 'https://h.org',
        title: 'x: "y"\n---',
        fetchedAt: null,
        lastChangedAt: null,
        contentSha256: null,
        lang: null,
        metadata: null,
        markdown: '# Body',
        summary,
        tags: ['a: b', '- c'],
        sourceType: 'html',
      },
      '# Body',
    );
    const match = /^---\n([\s\S]*?)\n---\n\n# Body\n$/.exec(file);
    expect(match).not.toBeNull();
    const front = parse(match?.[1] ?? '');
    expect(front.summary).toBe(summary);
    expect(front.title).toBe('x: "y"\n---');
    expect(front.tags).toEqual(['a: b', '- c']);
    expect(front.source_type).toBe('html');
  });
});
