import { describe, expect, it } from 'vitest';
import { TrapBudget, trapFamily, trapReason } from '../../domain/traps';

describe('trapReason', () => {
  it.each([
    'https://example.com/',
    'https://example.com/docs/a/b/c?x=1&y=2',
    'https://example.com/blog/2024/05/my-post',
    'https://example.com/news/2024-05-17/story',
    'https://example.com/events?date=2025-01',
    'https://example.com/a/b/a/b/a/b',
    'https://example.com/products/2500/3',
  ])('accepts %s', (url) => {
    expect(trapReason(url)).toBeUndefined();
  });

  it('flags URLs over the length limit', () => {
    const long = `https://example.com/${'a'.repeat(2100)}`;
    expect(trapReason(long)).toMatch(/characters long, over the limit of 2048/);
    expect(trapReason('https://example.com/abcdef', { maxUrlLength: 20 })).toMatch(/over the limit of 20/);
  });

  it('flags a path segment repeated more than the limit', () => {
    expect(trapReason('https://example.com/a/b/a/b/a/b/a/b')).toBe(
      'path segment "a" repeats more than 3 times',
    );
    expect(trapReason('https://example.com/x/x/x', { maxRepeatedSegments: 2 })).toMatch(
      /"x" repeats more than 2/,
    );
  });

  it('flags too many query parameters', () => {
    const query = Array.from({ length: 13 }, (_, index) => `p${index}=1`).join('&');
    expect(trapReason(`https://example.com/?${query}`)).toBe('13 query parameters, over the limit of 12');
    expect(trapReason('https://example.com/?a&b&c', { maxQueryParams: 2 })).toMatch(/3 query parameters/);
  });

  it('flags calendar paths beyond the year bounds', () => {
    expect(trapReason('https://example.com/calendar/2150/03/')).toBe(
      'calendar path with year 2150, after 2100',
    );
    expect(trapReason('https://example.com/calendar/1899/12/')).toBe(
      'calendar path with year 1899, before 1970',
    );
    expect(trapReason('https://example.com/cal/2027/01', { maxYear: 2026 })).toMatch(/after 2026/);
    expect(trapReason('https://example.com/cal/2027-01-05', { maxYear: 2026 })).toMatch(/year 2027/);
  });

  it('flags deep calendar paths with several dates', () => {
    expect(trapReason('https://example.com/2024/01/2024/02/')).toBe(
      'calendar path with 2 dates, over the limit of 1',
    );
  });

  it('flags calendar query parameters beyond the bounds', () => {
    expect(trapReason('https://example.com/events?month=2301-05')).toMatch(
      /calendar parameter month=2301-05, after 2100/,
    );
    expect(trapReason('https://example.com/events?year=1901&m=3')).toMatch(
      /calendar parameter year=1901, before 1970/,
    );
    expect(trapReason('https://example.com/events?id=1901')).toBeUndefined();
  });

  it('ignores undefined options and reports invalid URLs', () => {
    expect(trapReason('https://example.com/', { maxUrlLength: undefined })).toBeUndefined();
    expect(trapReason('not a url')).toBe('not a valid URL');
  });
});

describe('trapFamily', () => {
  it.each([
    ['https://example.com/calendar/2026/01/', 'calendar https://example.com/calendar/{yyyy}/{mm}'],
    ['https://example.com/calendar/2031/12', 'calendar https://example.com/calendar/{yyyy}/{mm}'],
    ['https://example.com/calendar/2026/01/15/', 'calendar https://example.com/calendar/{yyyy}/{mm}/{dd}'],
    ['https://example.com/day/2026-01-15', 'calendar https://example.com/day/{date}'],
    ['https://example.com/events?month=2026-01&view=grid', 'calendar https://example.com/events?month'],
    ['https://example.com/events?y=2026&m=1', 'calendar https://example.com/events?y'],
    ['https://example.com/a/b/a/b/', 'repeat https://example.com/a/'],
    ['https://example.com/x/x/', 'repeat https://example.com/x/'],
    ['https://example.com/soft/page/soft/', 'repeat https://example.com/soft/'],
  ])('puts %s in %s', (url, family) => {
    expect(trapFamily(url)).toBe(family);
  });

  it.each([
    'https://example.com/',
    'https://example.com/docs/page-3.html',
    'https://example.com/blog/2024/05/17/my-post/',
    'https://example.com/news/2024-05-17/story',
    'https://example.com/products/2500/3',
    'https://example.com/a/b/c/d/e/f/g/',
    'https://example.com/search?q=2026',
    'https://example.com/archive/2024/01/01/new-year/',
    'https://example.com/page/2/2',
    'not a url',
  ])('leaves %s in no family', (url) => {
    expect(trapFamily(url)).toBeUndefined();
  });
});

describe('TrapBudget', () => {
  const months = (count: number) =>
    Array.from({ length: count }, (_, i) => {
      const year = 2026 + Math.floor(i / 12);
      return `https://example.com/calendar/${year}/${String((i % 12) + 1).padStart(2, '0')}/`;
    });

  it('admits an endless calendar up to the family budget, per family, and never an ordinary page less', () => {
    const budget = new TrapBudget({ perFamily: 5 });
    const admitted = months(100).filter((url) => budget.admit(url));
    expect(admitted).toEqual(months(5));
    const days = Array.from(
      { length: 30 },
      (_, i) => `https://example.com/calendar/2026/01/${String(i + 1).padStart(2, '0')}/`,
    );
    expect(days.filter((url) => budget.admit(url))).toHaveLength(5);
    const growing = ['x/', 'x/x/', 'x/x/x/', 'x/x/x/x/', 'x/y/x/', 'x/y/x/y/', 'x/z/x/'].map(
      (p) => `https://example.com/${p}`,
    );
    expect(growing.filter((url) => budget.admit(url))).toEqual(growing.slice(0, 6));
    // Pages of no family are all admitted, dated posts included.
    const posts = Array.from({ length: 500 }, (_, i) => `https://example.com/blog/2026/01/15/post-${i}/`);
    expect(posts.every((url) => budget.admit(url))).toBe(true);
  });

  it('keeps its answer for a URL already admitted (a retried activity asks again)', () => {
    const budget = new TrapBudget({ perFamily: 2 });
    const [first, second, third] = months(3) as [string, string, string];
    expect([budget.admit(first), budget.admit(second), budget.admit(third)]).toEqual([true, true, false]);
    expect([budget.admit(first), budget.admit(second), budget.admit(third)]).toEqual([true, true, false]);
  });

  it('bounds the families it tracks', () => {
    const budget = new TrapBudget({ maxFamilies: 3 });
    const prefixes = ['a', 'b', 'c', 'd'].map((p) => `https://example.com/${p}/2026/01/`);
    expect(prefixes.map((url) => budget.admit(url))).toEqual([true, true, true, false]);
  });
});
