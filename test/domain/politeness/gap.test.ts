import { describe, expect, it } from 'vitest';
import { parseCrawlSpec } from '../../../domain/crawl-spec';
import { DEFAULT_DELAY_MS, gapLeftMs, originGapMs } from '../../../domain/politeness/gap';

describe('originGapMs and gapLeftMs', () => {
  it('takes the larger of the delay and Crawl-delay', () => {
    expect(originGapMs(1_000, undefined)).toBe(1_000);
    expect(originGapMs(1_000, 5_000)).toBe(5_000);
    expect(originGapMs(1_000, 0)).toBe(1_000);
    expect(originGapMs(0, undefined)).toBe(0);
  });

  it("falls back to the crawl spec's default delay, never to no gap at all", () => {
    const spec = parseCrawlSpec({ crawlId: 'a', seeds: ['https://example.org/'] });
    expect(DEFAULT_DELAY_MS).toBe(spec.delayMs);
    expect(originGapMs(undefined, undefined)).toBe(spec.delayMs);
    expect(originGapMs(undefined, 250)).toBe(spec.delayMs);
    expect(originGapMs(undefined, 5_000)).toBe(5_000);
  });

  it('leaves the gap less the time since the last request, nothing before any request', () => {
    expect(gapLeftMs(1_000, 10_000, 10_400)).toBe(600);
    expect(gapLeftMs(1_000, 10_000, 12_000)).toBeLessThanOrEqual(0);
    expect(gapLeftMs(1_000, undefined, 12_000)).toBeLessThanOrEqual(0);
  });
});
