import { describe, expect, it } from 'vitest';
import { ceilingWaitMs, hasRequestCeiling, nextGrantAtMs } from '../../../domain/politeness/request-ceiling';

/** Grants asked for at `askedAtMs` (in order), each waiting as the crawl workflow does: their times. */
function grantTimes(maxRequestsPerSecond: number, askedAtMs: readonly number[]): number[] {
  let next: number | undefined;
  let clock = 0;
  const times: number[] = [];
  for (const asked of askedAtMs) {
    clock = Math.max(clock, asked);
    clock += ceilingWaitMs(next, clock);
    times.push(clock);
    next = nextGrantAtMs(clock, maxRequestsPerSecond);
  }
  return times;
}

describe('request ceiling', () => {
  it('is off at 0 (the default)', () => {
    expect(hasRequestCeiling(0)).toBe(false);
    expect(hasRequestCeiling(0.5)).toBe(true);
  });

  it('lets the first grant out at once and spaces the next by 1 / ceiling', () => {
    expect(ceilingWaitMs(undefined, 12_345)).toBe(0);
    expect(nextGrantAtMs(10_000, 4)).toBe(10_250);
    expect(ceilingWaitMs(10_250, 10_100)).toBe(150);
    expect(ceilingWaitMs(10_250, 10_400)).toBe(0);
  });

  it('never lets more than the ceiling out in any second, however fast grants are asked', () => {
    const times = grantTimes(
      3,
      Array.from({ length: 30 }, () => 0),
    );
    for (let i = 3; i < times.length; i++) {
      expect((times[i] as number) - (times[i - 3] as number)).toBeGreaterThanOrEqual(1000 - 1e-9);
    }
    expect(times[29]).toBeCloseTo(29_000 / 3, 6);
  });

  it('does not bank the time no one asked: a late request goes at once, the next one a gap after it', () => {
    expect(grantTimes(2, [0, 5_000, 5_000])).toEqual([0, 5_000, 5_500]);
  });
});
