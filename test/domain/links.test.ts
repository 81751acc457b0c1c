import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ExtractedLink, extractLinks, parseRefreshUrl } from '../../domain/links';
import { InvalidUrlError } from '../../domain/url';
import { cpuMs } from '../../testbed/cpu-time';
import { unpackSite } from '../../testbed/sites';

const PAGE = 'http://127.0.0.1:8080/docs/page.html';
const PAGE_ORIGIN = 'http://127.0.0.1:8080';

function linksOf(html: string, pageUrl = PAGE): ExtractedLink[] {
  return extractLinks(html, pageUrl).links;
}

describe('extractLinks on the scikit-optimize 0.9 docs', () => {
  let root = '';
  const origin = 'http://127.0.0.1:8080';
  const read = (file: string): string => readFileSync(join(root, file), 'utf8');

  beforeAll(() => {
    root = unpackSite('skopt-0.9');
  });

  it('finds the index page navigation, cards and changelog links', () => {
    const result = extractLinks(read('index.html'), `${origin}/index.html`);
    const has = (url: string, anchorText: string) =>
      expect(result.links).toContainEqual({ url, anchorText, rel: '', nofollow: false, tag: 'a' });
    has(`${origin}/install.html`, 'Install');
    has(`${origin}/user_guide.html`, 'User Guide');
    has(`${origin}/modules/classes.html`, 'API');
    has(`${origin}/auto_examples/index.html`, 'Examples');
    has(`${origin}/whats_new/v0.9.html`, "What's New in 0.9.0");
    has(`${origin}/modules/generated/skopt.BayesSearchCV.html`, 'BayesSearchCV');
    has(`${origin}/whats_new/v0.8.html`, 'Changelog');
    has('https://github.com/scikit-optimize/scikit-optimize', 'GitHub');
    // An image-only card link takes its aria-label: the accessible name.
    has(
      `${origin}/auto_examples/sklearn-gridsearchcv-replacement.html`,
      'Scikit-learn hyperparameter search wrapper',
    );
    expect(result.links.some((link) => link.url === `${origin}/index.html` && link.anchorText === '')).toBe(
      false,
    );
    expect(result.canonicalUrl).toBe('https://scikit-optimize.github.io/index.html');
    expect(result.title).toBe(
      'scikit-optimize: sequential model-based optimization in Python — scikit-optimize 0.9.0 documentation',
    );
    expect(result.baseUrl).toBe(`${origin}/index.html`);
    expect(result.metaRobots).toEqual({ noindex: false, nofollow: false });
    expect(result.links.filter((link) => link.url.startsWith(`${origin}/`)).length).toBeGreaterThan(20);
  });

  it('keeps inline-markup anchor text, drops fragment-only links and marks rel=nofollow', () => {
    const result = extractLinks(read('getting_started.html'), `${origin}/getting_started.html`);
    expect(result.links).toContainEqual({
      url: `${origin}/modules/generated/skopt.gp_minimize.html`,
      anchorText: 'gp_minimize',
      rel: '',
      nofollow: false,
      tag: 'a',
    });
    expect(result.links).toContainEqual({
      url: `${origin}/_sources/getting_started.rst.txt`,
      anchorText: 'Show this page source',
      rel: 'nofollow',
      nofollow: true,
      tag: 'a',
    });
    expect(result.links).toContainEqual(
      expect.objectContaining({
        url: 'http://docs.scipy.org/doc/scipy/reference/optimize.html',
        anchorText: 'here',
      }),
    );
    expect(result.links.every((link) => !link.url.includes('#'))).toBe(true);
    expect(result.links.some((link) => link.anchorText === '¶')).toBe(false);
  });

  it('parses every page of the site', () => {
    const files = execFileSync('find', [root, '-name', '*.html'], { encoding: 'utf8' }).trim().split('\n');
    expect(files.length).toBeGreaterThan(150);
    for (const file of files) {
      const relative = file.slice(root.length);
      const result = extractLinks(readFileSync(file, 'utf8'), `${origin}${relative}`);
      for (const link of result.links) expect(link.url).toMatch(/^https?:\/\//);
    }
  }, 60_000);
});

describe('extractLinks fixtures', () => {
  it('resolves relative links against the page URL', () => {
    expect(
      linksOf('<a href="other.html">Other</a><a href="../up">Up</a><a href="/root?b=1&a=2#x">Root</a>'),
    ).toEqual([
      {
        url: 'http://127.0.0.1:8080/docs/other.html',
        anchorText: 'Other',
        rel: '',
        nofollow: false,
        tag: 'a',
      },
      { url: 'http://127.0.0.1:8080/up', anchorText: 'Up', rel: '', nofollow: false, tag: 'a' },
      {
        url: 'http://127.0.0.1:8080/root?a=2&b=1',
        anchorText: 'Root',
        rel: '',
        nofollow: false,
        tag: 'a',
        // Sorted into its canonical form: the form the page wrote is kept for robots.txt.
        asWritten: 'http://127.0.0.1:8080/root?b=1&a=2',
      },
    ]);
  });

  it('keeps the form a link was written in only where canonicalisation changed its parameters', () => {
    const links = linksOf(
      '<a href="/s?q=x&amp;page=2">sorted</a><a href="/p?id=1&amp;utm_source=feed">tracked</a>' +
        '<a href="/a;jsessionid=AB12?x=1">session</a><a href="/s?a=1&amp;b=2#top">already</a>' +
        '<a href="/%7Euser/A%2fb?">escapes</a><a href="/plain">plain</a>',
    );
    expect(
      links.map((link) => [link.url.slice(PAGE_ORIGIN.length), link.asWritten?.slice(PAGE_ORIGIN.length)]),
    ).toEqual([
      ['/s?page=2&q=x', '/s?q=x&page=2'],
      ['/p?id=1', '/p?id=1&utm_source=feed'],
      ['/a?x=1', '/a;jsessionid=AB12?x=1'],
      ['/s?a=1&b=2', undefined],
      ['/~user/A%2Fb', undefined],
      ['/plain', undefined],
    ]);
  });

  it('honours the first <base href>, resolved against the page, even for earlier links', () => {
    const html =
      '<a href="early">E</a><head><base href="/v2/"><base href="https://elsewhere.example/"></head><a href="x">X</a>';
    const result = extractLinks(html, PAGE);
    expect(result.baseUrl).toBe('http://127.0.0.1:8080/v2/');
    expect(result.links.map((link) => link.url)).toEqual([
      'http://127.0.0.1:8080/v2/early',
      'http://127.0.0.1:8080/v2/x',
    ]);
  });

  it('ignores a <base> that is not http(s)', () => {
    const result = extractLinks('<base href="javascript:void(0)"><a href="x">X</a>', PAGE);
    expect(result.baseUrl).toBe(PAGE);
    expect(result.links[0]?.url).toBe('http://127.0.0.1:8080/docs/x');
  });

  it('puts the first rel=canonical in canonicalUrl, not in links', () => {
    const html =
      '<link rel="Canonical" href="/docs/page.html?utm_source=x"><link rel="canonical" href="/second"><a href="/a">A</a>';
    const result = extractLinks(html, PAGE);
    expect(result.canonicalUrl).toBe('http://127.0.0.1:8080/docs/page.html');
    expect(result.links.map((link) => link.url)).toEqual(['http://127.0.0.1:8080/a']);
  });

  it('collects pagination and alternate <link>s but not stylesheets, icons or feeds', () => {
    const html = [
      '<link rel="next" href="p2" title="Next page">',
      '<link rel="prev" href="p0">',
      '<link rel="alternate" hreflang="de" href="/de/page.html">',
      '<link rel="alternate" type="application/rss+xml" href="/feed.xml">',
      '<link rel="alternate stylesheet" href="/alt.css">',
      '<link rel="stylesheet" href="/s.css"><link rel="icon" href="/f.ico">',
    ].join('');
    expect(linksOf(html)).toEqual([
      {
        url: 'http://127.0.0.1:8080/docs/p2',
        anchorText: 'Next page',
        rel: 'next',
        nofollow: false,
        tag: 'link',
      },
      { url: 'http://127.0.0.1:8080/docs/p0', anchorText: '', rel: 'prev', nofollow: false, tag: 'link' },
      {
        url: 'http://127.0.0.1:8080/de/page.html',
        anchorText: '',
        rel: 'alternate',
        nofollow: false,
        tag: 'link',
        hreflang: 'de',
      },
    ]);
  });

  it("keeps a language alternate's hreflang on <a> and <link>", () => {
    const html = '<a href="/fr/" hreflang=" fr-CA ">Français</a><a href="/en/">English</a>';
    expect(linksOf(html).map(({ url, hreflang }) => [url, hreflang])).toEqual([
      ['http://127.0.0.1:8080/fr/', 'fr-CA'],
      ['http://127.0.0.1:8080/en/', undefined],
    ]);
  });

  it('marks nofollow, ugc and sponsored links and normalises rel', () => {
    const html =
      '<a href="/1" rel="NoFollow">1</a><a href="/2" rel=" external  UGC ">2</a>' +
      '<a href="/3" rel="sponsored">3</a><a href="/4" rel="noopener">4</a>';
    expect(linksOf(html).map(({ rel, nofollow }) => [rel, nofollow])).toEqual([
      ['nofollow', true],
      ['external ugc', true],
      ['sponsored', true],
      ['noopener', false],
    ]);
  });

  it('parses meta robots, including none and several tags', () => {
    const robots = (html: string) => extractLinks(html, PAGE).metaRobots;
    expect(robots('<meta name="robots" content="noindex, nofollow">')).toEqual({
      noindex: true,
      nofollow: true,
    });
    expect(robots('<meta name="ROBOTS" content="NOINDEX">')).toEqual({ noindex: true, nofollow: false });
    expect(robots('<meta name="robots" content="none">')).toEqual({ noindex: true, nofollow: true });
    expect(robots('<meta name="robots" content="index"><meta name="robots" content="nofollow">')).toEqual({
      noindex: false,
      nofollow: true,
    });
    expect(robots('<meta name="googlebot" content="noindex">')).toEqual({ noindex: false, nofollow: false });
  });

  it('parses meta refresh into a canonical URL', () => {
    const refresh = (html: string) => extractLinks(html, PAGE).metaRefreshUrl;
    expect(refresh('<meta http-equiv="refresh" content="0; url=peroxide/">')).toBe(
      'http://127.0.0.1:8080/docs/peroxide/',
    );
    expect(refresh(`<meta http-equiv="Refresh" content="5;URL='/x?b=1&amp;a=2'">`)).toBe(
      'http://127.0.0.1:8080/x?a=2&b=1',
    );
    expect(refresh('<meta http-equiv="refresh" content="3">')).toBeUndefined();
    expect(refresh('<meta http-equiv="refresh" content="0; url=javascript:alert(1)">')).toBeUndefined();
    expect(parseRefreshUrl('0,http://a.example/')).toBe('http://a.example/');
    expect(parseRefreshUrl('1; url = "/q" trailing')).toBe('/q');
  });

  it('skips javascript:, mailto:, tel:, data:, fragment-only and empty hrefs', () => {
    const html = [
      '<a href="javascript:void(0)">js</a>',
      '<a href=" JavaScript:alert(1)">js2</a>',
      '<a href="mailto:a@example.com">mail</a>',
      '<a href="tel:+123">tel</a>',
      '<a href="data:text/html,hi">data</a>',
      '<a href="#top">top</a>',
      '<a href="">empty</a>',
      '<a>no href</a>',
      '<a href="ftp://example.com/">ftp</a>',
      '<a href="http://user:pw@example.com/">creds</a>',
      '<a href="ok">ok</a>',
    ].join('');
    expect(linksOf(html).map((link) => link.anchorText)).toEqual(['ok']);
  });

  it('decodes entities in hrefs and text', () => {
    const html = '<a href="/search?q=a&amp;lang=en&#38;x=1">Tom &amp; Jerry&nbsp;&lt;3</a>';
    expect(linksOf(html)[0]).toMatchObject({
      url: 'http://127.0.0.1:8080/search?lang=en&q=a&x=1',
      anchorText: 'Tom & Jerry <3',
    });
  });

  it('falls back from text to img alt, aria-label, then title', () => {
    const html =
      '<a href="/1"><img src="x.png" alt="Logo"></a><a href="/2" title="Title two"><img src="y.png"></a>' +
      '<a href="/3" aria-label="Label three" title="ignored"></a><a href="/4">   </a>';
    expect(linksOf(html).map((link) => link.anchorText)).toEqual(['Logo', 'Title two', 'Label three', '']);
  });

  it('uses alt for <area> and collapses whitespace in anchor text', () => {
    const html =
      '<map><area href="/r" alt=" Region\n one " rel="nofollow"></map><a href="/t">  a\n\t b <b>c</b><div>d</div></a>';
    expect(linksOf(html)).toEqual([
      {
        url: 'http://127.0.0.1:8080/r',
        anchorText: 'Region one',
        rel: 'nofollow',
        nofollow: true,
        tag: 'area',
      },
      { url: 'http://127.0.0.1:8080/t', anchorText: 'a b c d', rel: '', nofollow: false, tag: 'a' },
    ]);
  });

  it('cuts anchor text at 500 characters', () => {
    const text = linksOf(`<a href="/long">${'word '.repeat(300)}</a>`)[0]?.anchorText ?? '';
    expect(text.length).toBeLessThanOrEqual(500);
    expect(text.startsWith('word word')).toBe(true);
    expect(text.endsWith(' ')).toBe(false);
  });

  it('keeps the first link per (url, anchor text) but distinct anchors to one URL', () => {
    const html =
      '<a href="/x">One</a><a href="/x#frag">One</a><a href="/x">Two</a><a href="/x" rel="nofollow">One</a>';
    expect(linksOf(html).map((link) => [link.url, link.anchorText, link.rel])).toEqual([
      ['http://127.0.0.1:8080/x', 'One', ''],
      ['http://127.0.0.1:8080/x', 'Two', ''],
    ]);
  });

  it('does not collect links in template, script, style or noscript, nor form actions', () => {
    const html = [
      '<template><a href="/t">t</a><template><a href="/tt">tt</a></template><a href="/t2">t2</a></template>',
      '<script>document.write("<a href=\'/s\'>s</a>")</script>',
      '<style>a::after { content: "<a href=/st>" }</style>',
      '<noscript><a href="/n">n</a><meta http-equiv="refresh" content="0;url=/nojs"></noscript>',
      '<form action="/submit"><a href="/in-form">in form</a><button formaction="/b">b</button></form>',
      '<a href="/after">after</a>',
    ].join('');
    const result = extractLinks(html, PAGE);
    expect(result.links.map((link) => link.anchorText)).toEqual(['in form', 'after']);
    expect(result.metaRefreshUrl).toBeUndefined();
  });

  it('keeps script text out of anchor text and reads the first title only', () => {
    const html =
      '<title>First &amp; best</title><svg><title>icon</title></svg><title>Second</title>' +
      '<a href="/x">Go<script>var a = "<b>";</script> on</a>';
    const result = extractLinks(html, PAGE);
    expect(result.title).toBe('First & best');
    expect(result.links[0]?.anchorText).toBe('Go on');
  });

  it('collects SVG links', () => {
    expect(linksOf('<svg><a xlink:href="/svg-link"><text>Chart</text></a></svg>')[0]).toMatchObject({
      url: 'http://127.0.0.1:8080/svg-link',
      anchorText: 'Chart',
    });
  });

  it('tolerates malformed HTML', () => {
    const html =
      '<p><a href="/one">one<a href="/two">two</p><div <a href="/broken">x</a><a href=/unquoted class=x>u</a>' +
      '<a href="/unterminated';
    const links = linksOf(html);
    // Browsers re-open an <a> left open across </p>, so the stray "x" is link text of /two too.
    expect(links.slice(0, 2).map((link) => [link.url, link.anchorText])).toEqual([
      ['http://127.0.0.1:8080/one', 'one'],
      ['http://127.0.0.1:8080/two', 'two x'],
    ]);
    expect(links.map((link) => link.url)).toContain('http://127.0.0.1:8080/unquoted');
    expect(() => extractLinks('<<<>>></a></a><a <a <a', PAGE)).not.toThrow();
    expect(extractLinks('', PAGE)).toEqual({
      links: [],
      baseUrl: PAGE,
      metaRobots: { noindex: false, nofollow: false },
    });
  });

  it('handles deep nesting without recursion and stays linear', () => {
    const depth = 200_000;
    const html = `${'<div>'.repeat(depth)}<a href="/deep">deep</a>${'</span>'.repeat(depth)}`;
    const started = cpuMs();
    expect(linksOf(html)).toHaveLength(1);
    // The quadratic open-element stack of htmlparser2's Parser needs minutes here.
    expect(cpuMs() - started).toBeLessThan(15_000);
  }, 60_000);

  it('handles a 10 MB page in linear time', () => {
    const block = '<div class="row"><p>Some text &amp; more</p><a href="/item?id=N">Item N</a></div>\n';
    const count = Math.ceil((10 * 1024 * 1024) / block.length);
    const html = Array.from({ length: count }, (_, index) =>
      block.replaceAll('N', String(index % 5000)),
    ).join('');
    const started = cpuMs();
    const result = extractLinks(html, PAGE);
    expect(cpuMs() - started).toBeLessThan(30_000);
    expect(result.links).toHaveLength(5000);
    expect(result.truncated).toBeUndefined();
  }, 60_000);

  it('caps the number of links and says so', () => {
    const html = Array.from({ length: 50 }, (_, index) => `<a href="/p${index}">p</a>`).join('');
    const result = extractLinks(html, PAGE, { maxLinks: 10 });
    expect(result.links).toHaveLength(10);
    expect(result.truncated).toBe(true);
  });

  it('rejects a page URL that is not http(s)', () => {
    expect(() => extractLinks('<a href="x">x</a>', 'file:///tmp/x.html')).toThrow(InvalidUrlError);
  });
});
