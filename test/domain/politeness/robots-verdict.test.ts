import { describe, expect, it } from 'vitest';
import { robotsServerTrouble, robotsVerdict } from '../../../domain/politeness/robots-verdict';

describe('robotsServerTrouble', () => {
  it('is true for an unreachable robots.txt answering 5xx or 429 only', () => {
    expect(robotsServerTrouble({ source: 'unreachable-disallow-all', httpStatus: 503 })).toBe(true);
    expect(robotsServerTrouble({ source: 'unreachable-disallow-all', httpStatus: 429 })).toBe(true);
    expect(robotsServerTrouble({ source: 'unreachable-disallow-all' })).toBe(false);
    expect(robotsServerTrouble({ source: 'unavailable-allow-all', httpStatus: 404 })).toBe(false);
  });
});

describe('robotsVerdict', () => {
  it('does not crawl an unreachable origin, saying why', () => {
    expect(robotsVerdict({ source: 'unreachable-disallow-all', error: 'ECONNREFUSED' }, 60_000)).toEqual({
      kind: 'unreachable',
      reason: 'ECONNREFUSED; origin not crawled',
    });
    expect(robotsVerdict({ source: 'unreachable-disallow-all' }, 60_000)).toMatchObject({
      reason: 'robots.txt unreachable; origin not crawled',
    });
  });

  it('skips an origin whose Crawl-delay is over the limit', () => {
    expect(robotsVerdict({ source: 'fetched', crawlDelayMs: 120_000 }, 60_000)).toEqual({
      kind: 'deny',
      reason: 'robots.txt asks for Crawl-delay 120 s (limit 60 s); origin skipped',
    });
  });

  it('crawls with the Crawl-delay, or without one', () => {
    expect(robotsVerdict({ source: 'fetched', crawlDelayMs: 60_000 }, 60_000)).toEqual({
      kind: 'crawl',
      crawlDelayMs: 60_000,
    });
    expect(robotsVerdict({ source: 'unavailable-allow-all' }, 60_000)).toEqual({ kind: 'crawl' });
  });
});
