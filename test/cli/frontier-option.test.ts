import { describe, expect, it } from 'vitest';
import { specFromFlags as buildSpec } from '../../cli/crawl-flags';
import { parseCrawlSpec } from '../../domain/crawl-spec';

describe('--frontier-max-urls', () => {
  it('sets the crawl spec field; the default bound is 2000', () => {
    expect(buildSpec(['https://example.org/'], { frontierMaxUrls: 50 }).frontierMaxUrls).toBe(50);
    expect(parseCrawlSpec({ crawlId: 'a', seeds: ['https://example.org/'] }).frontierMaxUrls).toBe(2000);
  });

  it('rejects a bound too small to page through or too big for one history payload', () => {
    for (const bad of [5, 60_000, 20.5]) {
      expect(() =>
        parseCrawlSpec({ crawlId: 'a', seeds: ['https://example.org/'], frontierMaxUrls: bad }),
      ).toThrow(/frontierMaxUrls/);
    }
  });
});
