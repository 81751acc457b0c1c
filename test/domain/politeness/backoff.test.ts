import { describe, expect, it } from 'vitest';
import { backoffMs, parseRetryAfterMs, throttleDelayMs } from '../../../domain/politeness/backoff';

const NOW = Date.parse('2026-11-22T10:00:00Z');

describe('parseRetryAfterMs', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfterMs('120', NOW)).toBe(120_000);
    expect(parseRetryAfterMs(' 0 ', NOW)).toBe(0);
  });
  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfterMs('Sun, 22 Nov 2026 10:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfterMs('Sun, 22 Nov 2026 09:00:00 GMT', NOW)).toBe(0);
  });
  it('ignores what is neither', () => {
    expect(parseRetryAfterMs(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfterMs('-5', NOW)).toBeUndefined();
    expect(parseRetryAfterMs('1.5', NOW)).toBeUndefined();
    expect(parseRetryAfterMs('soon', NOW)).toBeUndefined();
  });
});

describe('backoff', () => {
  it('doubles from the base and stops at the cap (30 s to 10 min)', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((retry) => backoffMs(retry, 30_000, 600_000))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 600_000, 600_000,
    ]);
    expect(backoffMs(1000, 30_000, 600_000)).toBe(600_000);
  });
  it('prefers Retry-After, capped', () => {
    const options = { baseMs: 30_000, capMs: 600_000 };
    expect(throttleDelayMs('2', 1, NOW, options)).toBe(2_000);
    expect(throttleDelayMs('86400', 1, NOW, options)).toBe(600_000);
    expect(throttleDelayMs(undefined, 2, NOW, options)).toBe(60_000);
  });
});
