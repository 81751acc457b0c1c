/**
 * extractPage on real Sphinx pages (skopt 0.9) and on hostile input. Goldens are assertions on
 * specific strings of those pages: code keeps its language and exact text, tables become GFM tables,
 * one H1, and the site's navigation, sidebar and footer text does not leak.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { cpuMs } from '../../testbed/cpu-time';
import { unpackSite } from '../../testbed/sites';

let site: string;
beforeAll(() => {
  site = unpackSite('skopt-0.9');
});

function extractFile(relative: string) {
  const html = readFileSync(path.join(site, relative), 'utf8');
  return extractPage(html, `http://127.0.0.1:8000/${relative}`);
}

/** Lines that start an ATX H1, outside fenced code. */
function h1Lines(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').filter((line) => {
    if (/^(`{3,}|~{3,})/.test(line)) inFence = !inFence;
    return !inFence && /^# /.test(line);
  });
}

const CHROME_STRINGS = [
  'Toggle Menu',
  'Prev',
  'scikit-optimize contributors (BSD License)',
  'Show this page source',
];

describe('extractPage on skopt-0.9 pages', () => {
  it('keeps fenced code with its language and exact text, one H1, no chrome', () => {
    const page = extractFile('install.html');
    expect(page.title).toBe('Installation — scikit-optimize 0.9.0 documentation');
    expect(page.strategy).toMatch(/^selector:/);
    expect(page.markdown).toContain('```bash\n$ pip install scikit-optimize\n```');
    expect(page.markdown).toContain(
      '```bash\ngit clone https://github.com/scikit-optimize/scikit-optimize.git\ncd scikit-optimize\npip install -r requirements.txt\npython setup.py develop\n```',
    );
    expect(h1Lines(page.markdown)).toEqual(['# Installation']);
    for (const chrome of CHROME_STRINGS) {
      expect(page.markdown).not.toContain(chrome);
      expect(page.text).not.toContain(chrome);
    }
    expect(page.markdown).not.toMatch(/<\/?(div|span|table|pre|a)\b/);
  });

  it('turns tables into GFM tables with the right cell counts', () => {
    const page = extractFile('modules/generated/skopt.space.transformers.Transformer.html');
    const rows = page.markdown.split('\n').filter((line) => line.startsWith('|'));
    expect(rows).toEqual([
      '|  |  |',
      '| --- | --- |',
      '| **fit** |  |',
      '| **inverse\\_transform** |  |',
      '| **transform** |  |',
    ]);
    expect(h1Lines(page.markdown)).toHaveLength(1);
  });

  it('keeps code text exactly, including words that look like chrome', () => {
    const page = extractFile('auto_examples/bayesian-optimization.html');
    expect(page.markdown).toContain('print(__doc__)\n\nimport numpy as np\nnp.random.seed(237)');
    expect(page.markdown).toContain('# Bayesian optimization with `skopt`');
    expect(h1Lines(page.markdown)).toHaveLength(1);
    expect(page.markdown).toMatch(/\]\(http:\/\/127\.0\.0\.1:8000\/modules\/generated\/skopt\.plots/);
  });
});

describe('metadata', () => {
  it('prefers JSON-LD over OpenGraph over meta, and counts words', () => {
    const html = `<html lang="de"><head><title>T</title>
      <meta name="description" content="meta description">
      <meta property="og:description" content="og description">
      <meta property="og:title" content="OG title">
      <link rel="canonical" href="/canonical">
      <script type="application/ld+json">{"@context":"https://schema.org","@graph":[
        {"@type":"WebSite","name":"Site"},
        {"@type":"NewsArticle","headline":"LD headline","author":{"@type":"Person","name":"Ada"},
         "datePublished":"2024-03-01T10:00:00Z","publisher":{"@type":"Organization","name":"Pub"}}]}</script>
      </head><body><main><h1>LD headline</h1><p>${'word '.repeat(460)}</p></main></body></html>`;
    const page = extractPage(html, 'https://news.example/a/b');
    expect(page.metadata).toMatchObject({
      title: 'LD headline',
      description: 'og description',
      author: 'Ada',
      published: '2024-03-01T10:00:00.000Z',
      language: 'de',
      canonicalUrl: 'https://news.example/canonical',
      siteName: 'Pub',
      contentType: 'newsarticle',
      wordCount: 462,
      readingTimeMinutes: 2,
    });
    expect(page.confidence).toBeGreaterThan(0.5);
  });
});

describe('the main heading', () => {
  // Readability takes the only <h1> for its title when the <title> is short, and drops it as a repeat.
  const cafe = (title: string, header = '') =>
    `<html><head><title>${title}</title></head><body>${header}<main><h1>Café opening hours and menu</h1>
      <p>Our small café on the corner serves coffee, tea and cakes to the whole neighbourhood.</p>
      <h2>Menu</h2><p>Espresso, latte and many other drinks are served here every day of the week.</p>
      </main></body></html>`;

  it('keeps the words of the only <h1> when the <title> is short', () => {
    const page = extractPage(cafe('Café'), 'https://cafe.example/hours');
    expect(page.strategy).toBe('readability');
    expect(h1Lines(page.markdown)).toEqual(['# Café opening hours and menu']);
    expect(page.text).toContain('opening hours and menu');
    expect(page.markdown).toContain('## Menu');
  });

  it('keeps a short only <h1> as the H1, not as an H2 under a short <title>', () => {
    const html = cafe('Café').replace('Café opening hours and menu', 'Opening hours');
    const page = extractPage(html, 'https://cafe.example/hours');
    expect(h1Lines(page.markdown)).toEqual(['# Opening hours']);
    expect(page.markdown).not.toContain('## Opening hours');
  });

  it('does not take a site-wide <h1> from the header for the page heading', () => {
    const header =
      '<div class="masthead"><h1>Corner Café</h1><span>Coffee since 1984, open daily</span></div>';
    const html = cafe('Hours', header).replace('<h1>Café opening hours and menu</h1>', '');
    const page = extractPage(html, 'https://cafe.example/hours');
    expect(h1Lines(page.markdown)).toEqual(['# Hours']);
    expect(page.markdown).not.toContain('Corner Café');
  });
});

describe('bad input returns within bounded time', () => {
  const cases: [string, string][] = [
    ['empty', ''],
    ['10 MB single line', `<html><body><p>${'lorem ipsum '.repeat(900_000)}</p></body></html>`],
    ['10,000-deep nesting', `${'<div>'.repeat(10_000)}deep text${'</div>'.repeat(10_000)}`],
    ['unclosed 10,000-deep nesting', `<body>${'<span><div>'.repeat(10_000)}deep`],
    [
      'invalid UTF-8',
      Buffer.from([0x3c, 0x70, 0x3e, 0xff, 0xfe, 0xc3, 0x28, 0x61, 0x62, 0x63]).toString('utf8'),
    ],
    ['binary', Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256)).toString('latin1')],
  ];
  for (const [name, html] of cases) {
    it(name, () => {
      const started = cpuMs();
      const page = extractPage(html, 'https://example.test/');
      expect(cpuMs() - started).toBeLessThan(5_000);
      expect(typeof page.markdown).toBe('string');
      expect(page.confidence).toBeGreaterThanOrEqual(0);
      if (name === 'empty') expect(page.strategy).toBe('empty');
      if (name.includes('deep')) expect(page.text).toContain('deep');
      if (name === '10 MB single line') expect(page.truncated).toBe(true);
    });
  }
});
