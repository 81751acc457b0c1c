import { describe, expect, it } from 'vitest';
import {
  createSitemapParser,
  looksLikeXml,
  parseLastmod,
  parsePriority,
  parseTextSitemap,
  type SitemapEntry,
  type SitemapParserOptions,
} from '../../domain/sitemap';
import { cpuMs } from '../../testbed/cpu-time';

/** Parses `xml` fed in `chunkSize`-character pieces (1 = one character at a time). */
function parse(xml: string, chunkSize = xml.length, options?: SitemapParserOptions) {
  const entries: SitemapEntry[] = [];
  const parser = createSitemapParser((entry) => {
    entries.push(entry);
  }, options);
  for (let i = 0; i < xml.length; i += chunkSize) parser.write(xml.slice(i, i + chunkSize));
  return { entries, summary: parser.end() };
}

const URLSET = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>https://example.com/</loc>
    <lastmod>2024-05-17</lastmod>
    <changefreq>Daily</changefreq>
    <priority>1.0</priority>
  </url>
  <url>
    <loc>
      https://example.com/docs/a.html
    </loc>
    <lastmod>2024-05-17T10:30:00+02:00</lastmod>
    <priority>0.3</priority>
    <image:image><image:loc>https://example.com/a.png</image:loc></image:image>
  </url>
  <url><loc>https://example.com/q?a=1&amp;b=2</loc><priority>high</priority><lastmod>yesterday</lastmod></url>
  <url><loc></loc></url>
</urlset>`;

describe('createSitemapParser', () => {
  it('reads a urlset with lastmod, priority and changefreq, skipping nested image locs', () => {
    const { entries, summary } = parse(URLSET);
    expect(summary).toEqual({ kind: 'urlset', urls: 3, sitemaps: 0, truncated: false });
    expect(entries).toEqual([
      {
        kind: 'url',
        loc: 'https://example.com/',
        lastmod: '2024-05-17T00:00:00.000Z',
        priority: 1,
        changefreq: 'daily',
      },
      {
        kind: 'url',
        loc: 'https://example.com/docs/a.html',
        lastmod: '2024-05-17T08:30:00.000Z',
        priority: 0.3,
      },
      { kind: 'url', loc: 'https://example.com/q?a=1&b=2' },
    ]);
  });

  it('gives the same entries whatever the chunk boundaries', () => {
    const whole = parse(URLSET).entries;
    for (const size of [1, 2, 3, 7, 64]) expect(parse(URLSET, size).entries).toEqual(whole);
  });

  it('reads a sitemap index', () => {
    const { entries, summary } = parse(`<?xml version="1.0"?>
      <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>2024-01-02T03:04:05Z</lastmod></sitemap>
        <sitemap><loc>https://example.com/s2.xml</loc></sitemap>
      </sitemapindex>`);
    expect(summary).toEqual({ kind: 'sitemapindex', urls: 0, sitemaps: 2, truncated: false });
    expect(entries).toEqual([
      { kind: 'sitemap', loc: 'https://example.com/s1.xml.gz', lastmod: '2024-01-02T03:04:05.000Z' },
      { kind: 'sitemap', loc: 'https://example.com/s2.xml' },
    ]);
  });

  it('matches elements with namespace prefixes, any case', () => {
    const { entries, summary } = parse(
      `<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://example.com/p</sm:loc><SM:Priority>0.7</SM:Priority></sm:url></sm:urlset>`,
    );
    expect(summary.kind).toBe('urlset');
    expect(entries).toEqual([{ kind: 'url', loc: 'https://example.com/p', priority: 0.7 }]);
  });

  it('reads CDATA and numeric and named entities', () => {
    const { entries } = parse(
      `<urlset><url><loc><![CDATA[https://example.com/a?x=1&y=2]]></loc></url>` +
        `<url><loc>https://example.com/caf&#xE9;/&#233;t&#233;?a=&lt;&gt;&amp;b=&quot;&apos;</loc></url></urlset>`,
      5,
    );
    expect(entries.map((entry) => entry.loc)).toEqual([
      'https://example.com/a?x=1&y=2',
      `https://example.com/café/été?a=<>&b="'`,
    ]);
  });

  it('emits nothing for a document that is not a sitemap', () => {
    const { entries, summary } = parse(
      '<html><body><url><loc>https://example.com/</loc></url></body></html>',
    );
    expect(summary).toEqual({ kind: 'unknown', urls: 0, sitemaps: 0, truncated: false });
    expect(entries).toEqual([]);
  });

  it('does not throw on malformed XML and keeps what it can read', () => {
    const broken = [
      '<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://example.com/2</loc><url><loc>https://example.com/3</loc></url>',
      '<urlset><url><loc>https://example.com/a</lastmod></url></urlset>',
      '<urlset><url><loc>https://example.com/cut',
      '<urlset><url><loc>https://example.com/<!-- unterminated',
      '<<<>>></urlset></url></loc>&bogus;&#xZZ;<![CDATA[',
      '\u0000\uFFFF<urlset><url',
      '',
    ];
    for (const xml of broken) {
      expect(() => parse(xml)).not.toThrow();
      expect(() => parse(xml, 1)).not.toThrow();
    }
    expect(parse(broken[0] as string).entries.map((e) => e.loc)).toEqual([
      'https://example.com/1',
      'https://example.com/2',
      'https://example.com/3',
    ]);
    expect(parse(broken[1] as string).entries.map((e) => e.loc)).toEqual(['https://example.com/a']);
    // Cut inside its <loc>, the entry has no URL: the text read so far is only a prefix of one.
    expect(parse(broken[2] as string).entries).toEqual([]);
  });

  it('keeps the entries a cut-off file closed, and none from a <loc> the cut fell in', () => {
    const full = `<urlset>
      <url><loc>https://example.com/docs/install</loc><lastmod>2024-05-17</lastmod></url>
      <url><loc>https://example.com/docs/getting-started</loc><priority>0.8</priority></url>
    </urlset>`;
    const inLoc = full.indexOf('getting-sta') + 'getting-sta'.length;
    for (const chunkSize of [1, 7, full.length]) {
      expect(parse(full.slice(0, inLoc), chunkSize).entries.map((e) => e.loc)).toEqual([
        'https://example.com/docs/install',
      ]);
    }
    // Cut after the <loc> closed, in a later field: the URL is whole and kept, the cut field is not.
    const inPriority = full.indexOf('0.8') + 2;
    expect(parse(full.slice(0, inPriority)).entries.slice(1)).toEqual([
      { kind: 'url', loc: 'https://example.com/docs/getting-started' },
    ]);
  });

  it('drops a <loc> longer than the limit instead of buffering it', () => {
    const { entries } = parse(
      `<urlset><url><loc>https://example.com/${'a'.repeat(100_000)}</loc></url></urlset>`,
    );
    expect(entries).toEqual([]);
  });

  it('stops after maxUrls entries and says truncated', () => {
    const xml = `<urlset>${Array.from({ length: 10 }, (_, i) => `<url><loc>https://example.com/${i}</loc></url>`).join('')}</urlset>`;
    const { entries, summary } = parse(xml, 16, { maxUrls: 4 });
    expect(entries.map((e) => e.loc)).toEqual([0, 1, 2, 3].map((i) => `https://example.com/${i}`));
    expect(summary).toEqual({ kind: 'urlset', urls: 4, sitemaps: 0, truncated: true });
    expect(parse(xml, 16, { maxUrls: 10 }).summary.truncated).toBe(false);
  });

  it('stops when onEntry returns false', () => {
    let seen = 0;
    const parser = createSitemapParser(() => ++seen < 2);
    parser.write('<urlset><url><loc>https://e.com/1</loc></url><url><loc>https://e.com/2</loc></url>');
    parser.write('<url><loc>https://e.com/3</loc></url></urlset>');
    expect(parser.end()).toMatchObject({ urls: 2, truncated: true });
    expect(seen).toBe(2);
  });

  it('stays bounded on a generated 60,000-URL sitemap streamed in 64 KiB chunks', () => {
    let count = 0;
    let last = '';
    const parser = createSitemapParser((entry) => {
      count++;
      last = entry.loc;
    }, {});
    parser.write(
      '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n',
    );
    let buffered = '';
    for (let i = 0; i < 60_000; i++) {
      buffered += `<url><loc>https://example.com/page/${i}</loc><lastmod>2024-01-01</lastmod><priority>0.5</priority></url>\n`;
      if (buffered.length >= 64 * 1024) {
        parser.write(buffered);
        buffered = '';
      }
    }
    parser.write(`${buffered}</urlset>`);
    const summary = parser.end();
    expect(summary).toEqual({ kind: 'urlset', urls: 50_000, sitemaps: 0, truncated: true });
    expect(count).toBe(50_000);
    expect(last).toBe('https://example.com/page/49999');
  });

  it('is linear on deeply nested markup', () => {
    const depth = 200_000;
    const xml = `<urlset>${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}<url><loc>https://e.com/</loc></url></urlset>`;
    const started = cpuMs();
    const { entries } = parse(xml, 65_536);
    expect(cpuMs() - started).toBeLessThan(2_000);
    expect(entries).toHaveLength(1);
  });
});

describe('parsePriority and parseLastmod', () => {
  it('accepts priorities in [0, 1] only', () => {
    expect(parsePriority(' 0.8 ')).toBe(0.8);
    expect(parsePriority('1')).toBe(1);
    expect(parsePriority('.5')).toBe(0.5);
    for (const bad of ['1.5', '-0.1', 'NaN', '', '0x1', '1e-1', 'high'])
      expect(parsePriority(bad)).toBeUndefined();
  });

  it('reads W3C datetimes as UTC, whatever the machine time zone', () => {
    expect(parseLastmod('2024')).toBe('2024-01-01T00:00:00.000Z');
    expect(parseLastmod('2024-05')).toBe('2024-05-01T00:00:00.000Z');
    expect(parseLastmod('2024-05-17T10:00')).toBe('2024-05-17T10:00:00.000Z');
    expect(parseLastmod('2024-05-17T10:00:00.123456-0500')).toBe('2024-05-17T15:00:00.123Z');
    for (const bad of ['2024-02-31', '2024-13-01', '17/05/2024', '0999-01-01', 'soon', ''])
      expect(parseLastmod(bad)).toBeUndefined();
  });
});

describe('parseTextSitemap', () => {
  it('reads one http(s) URL per line and skips the rest', () => {
    const text =
      '\uFEFFhttps://example.com/a\r\n\n  http://example.com/b  \nnot a url\nftp://example.com/c\nhttps://example.com/d';
    expect(parseTextSitemap(text)).toEqual({
      urls: ['https://example.com/a', 'http://example.com/b', 'https://example.com/d'],
      truncated: false,
    });
    expect(parseTextSitemap(text, { maxUrls: 2 })).toEqual({
      urls: ['https://example.com/a', 'http://example.com/b'],
      truncated: true,
    });
  });

  it('tells XML from text by the first character', () => {
    expect(looksLikeXml('\uFEFF  <?xml version="1.0"?>')).toBe(true);
    expect(looksLikeXml('https://example.com/')).toBe(false);
  });
});
