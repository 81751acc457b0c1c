import { describe, expect, it } from 'vitest';
import { trapReason } from '../../domain/traps';

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
