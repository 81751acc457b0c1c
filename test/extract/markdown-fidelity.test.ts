/**
 * Markdown fidelity on real documentation pages (skopt 0.9, Sphinx; peroxide, rustdoc), and the
 * normaliser and turndown rules on small hand-written inputs. The expected code text and table shapes
 * are read from each page's own HTML (its `<pre>` and `<table>` elements), so the assertions follow
 * the page, not our output; chrome strings are specific text from those pages' navigation, sidebars
 * and footers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { headingAnchors, normalizeMarkdown } from '../../extract/normalize-markdown';
import { unpackSite } from '../../testbed/sites';

interface Fence {
  language: string;
  body: string;
}

/** Fenced blocks of `markdown`, list indentation removed from their bodies. */
function fences(markdown: string): Fence[] {
  const out: Fence[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(\S*)\s*$/.exec(lines[i] as string);
    if (!open) continue;
    const [, indent = '', marker = '', language = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && (lines[j] as string).trim() !== marker) {
      const line = lines[j] as string;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
      j++;
    }
    out.push({ language, body: body.join('\n') });
    i = j;
  }
  return out;
}

/** Lines outside fenced code. */
function proseLines(markdown: string): string[] {
  let marker: string | undefined;
  return markdown.split('\n').filter((line) => {
    const fence = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker === undefined && fence) {
      marker = fence;
      return false;
    }
    if (marker !== undefined) {
      if (line.trim() === marker) marker = undefined;
      return false;
    }
    return true;
  });
}

function headingLevels(markdown: string): number[] {
  return proseLines(markdown)
    .map((line) => /^(#{1,6}) /.exec(line)?.[1]?.length)
    .filter((level): level is number => level !== undefined);
}

/** Markdown tables as rows of cells (split on unescaped pipes). */
function gfmTables(markdown: string): string[][][] {
  const tables: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of proseLines(markdown)) {
    if (/^\s*\|/.test(line)) {
      current ??= [];
      current.push(
        line
          .trim()
          .slice(1, -1)
          .split(/(?<!\\)\|/),
      );
    } else if (current) {
      tables.push(current);
      current = undefined;
    }
  }
  if (current) tables.push(current);
  return tables;
}

/** Shape of an HTML table: rows, and width counting colspans. */
function htmlTableShape(table: Element): { rows: number; width: number; hasHeader: boolean } {
  const rows = Array.from(table.querySelectorAll('tr')).filter((tr) => tr.closest('table') === table);
  const width = Math.max(
    ...rows.map((tr) =>
      Array.from(tr.children)
        .filter((cell) => cell.localName === 'td' || cell.localName === 'th')
        .reduce((sum, cell) => sum + Math.max(1, Number(cell.getAttribute('colspan') ?? 1)), 0),
    ),
  );
  const first = rows[0];
  const hasHeader =
    first !== undefined &&
    (first.parentElement?.localName === 'thead' ||
      Array.from(first.children).every((c) => c.localName === 'th'));
  return { rows: rows.length, width, hasHeader };
}

function expectStructure(markdown: string): void {
  // Already normal: normalising again changes nothing.
  expect(normalizeMarkdown(markdown)).toBe(markdown);
  const levels = headingLevels(markdown);
  expect(levels[0]).toBe(1);
  expect(levels.filter((level) => level === 1)).toHaveLength(1);
  levels.forEach((level, index) => {
    if (index > 0) expect(level).toBeLessThanOrEqual((levels[index - 1] as number) + 1);
  });
  // No raw HTML outside code: tag-like text is escaped (`\<`), elements never pass through.
  for (const line of proseLines(markdown)) {
    expect(line.replace(/`[^`]*`/g, '')).not.toMatch(
      /(?<!\\)<\/?(div|span|p|a|img|table|tr|td|th|pre|code|details|summary|section|main|nav)\b/i,
    );
  }
}

interface LoadedPage {
  html: string;
  doc: Document;
  markdown: string;
}

function load(root: string, relative: string): LoadedPage {
  const html = readFileSync(path.join(root, relative), 'utf8');
  const page = extractPage(html, `http://127.0.0.1:8000/${relative}`);
  return { html, doc: parseHTML(html).document as unknown as Document, markdown: page.markdown };
}

/** Every `<pre>` under `container` appears as a fence with exactly its text and the expected language. */
function expectCodeKept(page: LoadedPage, container: string, language: (pre: Element) => string): number {
  const pres = Array.from(page.doc.querySelectorAll(`${container} pre`));
  const found = fences(page.markdown);
  for (const pre of pres) {
    const text = (pre.textContent ?? '').replace(/\n$/, '');
    const match = found.find((fence) => fence.body === text);
    expect(match, `a fence with the text of <pre>${text.slice(0, 60)}`).toBeDefined();
    expect(match?.language).toBe(language(pre));
  }
  return pres.length;
}

/** Every top-level `<table>` under `container` is a GFM table of the same shape, in order. */
function expectTablesKept(page: LoadedPage, container: string): number {
  const tables = Array.from(page.doc.querySelectorAll(`${container} table`)).filter(
    (table) => table.parentElement?.closest('table') === null,
  );
  const markdownTables = gfmTables(page.markdown);
  expect(markdownTables).toHaveLength(tables.length);
  tables.forEach((table, index) => {
    const shape = htmlTableShape(table);
    const rows = markdownTables[index] as string[][];
    // Header-less tables get an empty header row; every table gets the separator row.
    expect(rows).toHaveLength(shape.rows + 1 + (shape.hasHeader ? 0 : 1));
    for (const row of rows) expect(row).toHaveLength(shape.width);
    expect((rows[1] as string[]).every((cell) => cell.trim() === '---')).toBe(true);
  });
  return tables.length;
}

const sphinxLanguage = (pre: Element) => {
  const lang = /highlight-(\w+)/.exec(pre.closest('[class*="highlight-"]')?.getAttribute('class') ?? '')?.[1];
  return lang === undefined || lang === 'default' || lang === 'none' ? '' : lang;
};

describe('skopt-0.9 (Sphinx) pages as Markdown', () => {
  let site: string;
  beforeAll(() => {
    site = unpackSite('skopt-0.9');
  });
  const SPHINX_CHROME = [
    'Toggle Menu',
    'Other Versions',
    'Getting Started',
    'scikit-optimize contributors (BSD License)',
    'Show this page source',
    'Prev',
  ];

  it('install.html: bash fences with their exact text', () => {
    const page = load(site, 'install.html');
    expect(expectCodeKept(page, '[role="main"]', sphinxLanguage)).toBeGreaterThanOrEqual(2);
    expect(fences(page.markdown).map((f) => f.language)).toContain('bash');
    expectStructure(page.markdown);
    for (const chrome of SPHINX_CHROME) expect(page.markdown).not.toContain(chrome);
  });

  it('modules/classes.html: every autosummary table as a GFM table of the right shape', () => {
    const page = load(site, 'modules/classes.html');
    expect(expectTablesKept(page, '[role="main"]')).toBe(14);
    expectStructure(page.markdown);
    for (const chrome of SPHINX_CHROME) expect(page.markdown).not.toContain(chrome);
  });

  it('skopt.BayesSearchCV.html: code, tables, parameter types, one H1', () => {
    const page = load(site, 'modules/generated/skopt.BayesSearchCV.html');
    expect(expectCodeKept(page, '[role="main"]', sphinxLanguage)).toBeGreaterThan(0);
    expect(expectTablesKept(page, '[role="main"]')).toBe(2);
    expectStructure(page.markdown);
    // Sphinx separates a parameter's name and type only with CSS; the Markdown keeps them apart.
    expect(page.markdown).toMatch(/\*\*estimator\*\* : estimator object/);
    for (const chrome of SPHINX_CHROME) expect(page.markdown).not.toContain(chrome);
  });

  it('skopt.dummy_minimize.html: the "See also" admonition is a titled blockquote, thumbnails keep alt text', () => {
    const page = load(site, 'modules/generated/skopt.dummy_minimize.html');
    expect(page.markdown).toContain('> **See also**\n>\n> functions [`skopt.gp_minimize`]');
    expect(page.markdown).toMatch(
      /!\[Comparing surrogate models\]\(http:\/\/127\.0\.0\.1:8000\/[^)]*sphx_glr_strategy-comparison_thumb\.png\)/,
    );
    expect(page.markdown).not.toContain('¶');
    expectStructure(page.markdown);
  });

  it('auto_examples/sampler/initial-sampling-method.html: every code cell exact', () => {
    const page = load(site, 'auto_examples/sampler/initial-sampling-method.html');
    expect(expectCodeKept(page, '[role="main"]', sphinxLanguage)).toBeGreaterThan(5);
    expectStructure(page.markdown);
    for (const chrome of SPHINX_CHROME) expect(page.markdown).not.toContain(chrome);
  });
});

describe('peroxide (rustdoc) pages as Markdown', () => {
  let site: string;
  beforeAll(() => {
    site = unpackSite('peroxide-docs');
  });
  const RUSTDOC_CHROME = [
    'This old browser is unsupported',
    'Module Items',
    'In peroxide::',
    'Settings',
    'Keyboard Shortcuts',
    'Search',
  ];
  // rustdoc marks Rust examples `pre.rust` and other fenced languages `pre.language-x`.
  const rustLanguage = (pre: Element) =>
    /language-(\w+)/.exec(pre.getAttribute('class') ?? '')?.[1] ??
    (pre.classList.contains('rust') ? 'rust' : '');

  it('structure/dataframe: rust fences exact, the dtype table with its header, anchors without §', () => {
    const page = load(site, 'peroxide/structure/dataframe/index.html');
    expect(expectCodeKept(page, 'main', rustLanguage)).toBe(11);
    expect(expectTablesKept(page, 'main')).toBe(1);
    expect(page.markdown).toContain('| Primitive type | DType |\n| --- | --- |\n| `usize` | `USIZE` |');
    expect(page.markdown).not.toContain('§');
    expect(page.markdown).not.toContain('ⓘ');
    expectStructure(page.markdown);
    expect(headingAnchors(page.markdown).map((h) => h.anchor)).toEqual(
      expect.arrayContaining([
        'module-dataframe',
        'series',
        '1-declare-series',
        'dataframe',
        '1-declare-dataframe',
      ]),
    );
    for (const chrome of RUSTDOC_CHROME) expect(page.markdown).not.toContain(chrome);
  });

  it('the crate root: code exact, one H1, no sidebar', () => {
    const page = load(site, 'peroxide/index.html');
    expect(expectCodeKept(page, 'main', rustLanguage)).toBeGreaterThan(3);
    expectStructure(page.markdown);
    for (const chrome of RUSTDOC_CHROME) expect(page.markdown).not.toContain(chrome);
  });

  it('a struct page: declarations and examples exact, heading levels continuous', () => {
    const page = load(site, 'peroxide/structure/dataframe/struct.DataFrame.html');
    expect(expectCodeKept(page, 'main', rustLanguage)).toBeGreaterThan(3);
    expectStructure(page.markdown);
    for (const chrome of RUSTDOC_CHROME) expect(page.markdown).not.toContain(chrome);
  });

  // rustdoc's <summary class="hideme">Expand description</summary> is a toggle's label, not content.
  it('no "Expand description" toggle text', () => {
    const page = load(site, 'peroxide/structure/dataframe/index.html');
    expect(page.markdown).not.toContain('Expand description');
  });
});

describe('normalizeMarkdown', () => {
  it('keeps one H1, re-levels skipped levels keeping nesting, drops empty sections', () => {
    const input = [
      '# Title',
      '',
      '### A',
      'a',
      '#### A1',
      'a1',
      '## B',
      '',
      '### Empty',
      '',
      '## C',
      'c',
      '# Second',
      'x',
    ].join('\n');
    expect(normalizeMarkdown(input)).toBe(
      ['# Title', '', '## A', 'a', '### A1', 'a1', '', '## C', 'c', '## Second', 'x'].join('\n'),
    );
  });

  it('adds the title as H1 when there is none, else promotes the first heading', () => {
    expect(normalizeMarkdown('### Part\n\ntext', { title: 'Doc' })).toBe('# Doc\n\n## Part\n\ntext');
    expect(normalizeMarkdown('## Part\n\ntext\n\n#### Sub\n\nmore')).toBe('# Part\n\ntext\n\n## Sub\n\nmore');
  });

  it('cleans whitespace and entities outside code, and never touches fenced code', () => {
    const code = '```python\nx = "&amp;"  \n\n\n\n# not a heading\ny\u00a0=\u00a01   \n```';
    const input = `\n\n# T\u00a0itle  \n\n\n\nAT&amp;T &lt;div&gt; \`a&amp;b\`\u200b   \n\n\n${code}\n\n\n`;
    expect(normalizeMarkdown(input)).toBe(`# T itle\n\nAT&T \\<div> \`a&amp;b\`\n\n${code}`);
  });

  it('is idempotent', () => {
    const input = '# A\n\n### B\n\nx &amp; <span> y\n\n## C\n\n```\n## not\n```';
    const once = normalizeMarkdown(input);
    expect(normalizeMarkdown(once)).toBe(once);
  });

  it('gives GitHub-style anchors, deduplicated', () => {
    const anchors = headingAnchors(
      '# Hello, World!\n\n## Usage\n\n## Usage\n\n## `foo_bar()` [link](x)\n\n```\n# no\n```\n\n## Usage',
    );
    expect(anchors.map((a) => a.anchor)).toEqual([
      'hello-world',
      'usage',
      'usage-1',
      'foo_bar-link',
      'usage-2',
    ]);
    expect(anchors.map((a) => a.line)).toEqual([1, 3, 5, 7, 13]);
    expect(anchors[3]?.text).toBe('foo_bar() link');
  });
});

describe('turndown rules on hand-written HTML', () => {
  const md = (body: string) =>
    extractPage(
      `<html><head><title>T</title></head><body><main><h1>T</h1>${body}<p>${'filler words here '.repeat(20)}</p></main></body></html>`,
    ).markdown;

  it('code language from language-, lang-, highlight- (also on a wrapping div), brush:', () => {
    const out = md(
      [
        '<pre><code class="language-ts">let a = 1;</code></pre>',
        '<pre class="lang-go">go run .</pre>',
        '<div class="highlight-python notranslate"><div class="highlight"><pre>print(1)</pre></div></div>',
        '<pre class="brush: ruby; gutter: false">puts 1</pre>',
      ].join(''),
    );
    expect(fences(out)).toEqual([
      { language: 'ts', body: 'let a = 1;' },
      { language: 'go', body: 'go run .' },
      { language: 'python', body: 'print(1)' },
      { language: 'ruby', body: 'puts 1' },
    ]);
  });

  it('header-less tables and colspans', () => {
    const out = md('<table><tr><td colspan="2">wide</td></tr><tr><td>a</td><td>b</td></tr></table>');
    expect(out).toContain('|  |  |\n| --- | --- |\n| wide |  |\n| a | b |');
  });

  it('admonitions from GitHub and Docusaurus as titled blockquotes', () => {
    const out = md(
      '<div class="markdown-alert markdown-alert-warning"><p class="markdown-alert-title"><svg></svg>Warning</p><p>Mind the gap.</p></div>' +
        '<div class="theme-admonition theme-admonition-tip alert"><div class="admonitionHeading_x"><span></span>tip</div><div class="admonitionContent_y"><p>Try it.</p></div></div>',
    );
    expect(out).toContain('> **Warning**\n>\n> Mind the gap.');
    expect(out).toContain('> **Tip**\n>\n> Try it.');
  });

  it('figures keep alt text, or the caption when alt is missing, and a numbered caption', () => {
    const out = md(
      '<figure><img src="/a.png" alt="A chart"><figcaption>Figure 1: growth</figcaption></figure><figure><img src="/b.png"><figcaption>Only caption</figcaption></figure>',
    );
    expect(out).toContain('![A chart](/a.png)');
    expect(out).toContain('Figure 1: growth');
    expect(out).toContain('![Only caption](/b.png)');
  });
});
