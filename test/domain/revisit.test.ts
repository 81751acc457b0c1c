import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REVISIT_POLICY, isDue, nextRevisitIntervalMs, type PageChange } from '../../domain/revisit';

const HOUR = 3_600_000;
const change = fc.constantFrom<PageChange>('new', 'changed', 'unchanged', 'removed');
const policy = DEFAULT_REVISIT_POLICY;

describe('adaptive revisit interval', () => {
  it('starts a new or untimed page at the initial interval', () => {
    expect(nextRevisitIntervalMs(undefined, 'new')).toBe(24 * HOUR);
    expect(nextRevisitIntervalMs(null, 'unchanged')).toBe(24 * HOUR);
    expect(nextRevisitIntervalMs(5 * HOUR, 'new')).toBe(24 * HOUR);
  });

  it('halves on a change and grows by half when unchanged', () => {
    expect(nextRevisitIntervalMs(24 * HOUR, 'changed')).toBe(12 * HOUR);
    expect(nextRevisitIntervalMs(24 * HOUR, 'unchanged')).toBe(36 * HOUR);
    expect(nextRevisitIntervalMs(24 * HOUR, 'removed')).toBe(36 * HOUR);
  });

  it('stays within bounds whatever the history', () => {
    fc.assert(
      fc.property(
        fc.option(fc.double({ min: -1e15, max: 1e15, noNaN: true })),
        fc.array(change),
        (start, changes) => {
          let interval: number | null | undefined = start;
          for (const c of changes) {
            interval = nextRevisitIntervalMs(interval, c);
            expect(interval).toBeGreaterThanOrEqual(policy.minMs);
            expect(interval).toBeLessThanOrEqual(policy.maxMs);
            expect(Number.isInteger(interval)).toBe(true);
          }
        },
      ),
    );
  });

  it('a page that keeps changing converges to the minimum, one that never does to the maximum', () => {
    let busy = nextRevisitIntervalMs(undefined, 'new');
    let quiet = busy;
    for (let i = 0; i < 20; i++) {
      busy = nextRevisitIntervalMs(busy, 'changed');
      quiet = nextRevisitIntervalMs(quiet, 'unchanged');
    }
    expect(busy).toBe(policy.minMs);
    expect(quiet).toBe(policy.maxMs);
  });

  it('is monotone: a change never lengthens the interval, no change never shortens it', () => {
    fc.assert(
      fc.property(fc.integer({ min: policy.minMs, max: policy.maxMs }), (previous) => {
        expect(nextRevisitIntervalMs(previous, 'changed')).toBeLessThanOrEqual(previous);
        expect(nextRevisitIntervalMs(previous, 'unchanged')).toBeGreaterThanOrEqual(previous);
      }),
    );
  });

  it('a page is due once its time has come, or when it was never timed', () => {
    expect(isDue(undefined, 1000)).toBe(true);
    expect(isDue(null, 1000)).toBe(true);
    expect(isDue(1000, 1000)).toBe(true);
    expect(isDue(1001, 1000)).toBe(false);
  });
});
