import { describe, expect, it } from 'vitest';
import {
  type HandoffOverhead,
  handoffForOverhead,
  handoffMs,
  INITIAL_HANDOFF_MS,
  LAST_LAP_MAX_HANDOFF_MS,
  lapOverheadMs,
  MAX_HANDOFF_MS,
  nextHandoffMs,
  nextHandoffOverhead,
  pacingLatenessMs,
  pacingSlackMs,
  pacingWaitMs,
  skewedJitterMs,
} from '../../../domain/politeness/request-pacing';

const CLOCK = 'clock-a';

describe('pacingWaitMs', () => {
  const pacing = { gapMs: 500, handoffMs: 200, previous: { clockId: CLOCK, atMs: 10_000 } };

  it('on the clock that saw the previous response, waits until that end + gap (+ slack)', () => {
    const slack = pacingSlackMs(500);
    const wait = pacingWaitMs(pacing, {
      clockId: CLOCK,
      startedAtMs: 10_350,
      nowMs: 10_380,
      firstAttempt: true,
    });
    expect(wait).toBe(10_000 + 500 + slack - 10_380);
    // The request then goes out no earlier than the previous end + gap on that one clock.
    expect(10_380 + wait - pacing.previous.atMs).toBeGreaterThanOrEqual(pacing.gapMs);
  });

  it('waits nothing once the gap has passed on that clock', () => {
    expect(
      pacingWaitMs(pacing, { clockId: CLOCK, startedAtMs: 10_600, nowMs: 10_610, firstAttempt: true }),
    ).toBe(0);
  });

  it("on another process's clock, waits the whole hand-off from the activity's start", () => {
    const clock = { clockId: 'clock-b', startedAtMs: 3, nowMs: 8, firstAttempt: true };
    expect(pacingWaitMs(pacing, clock)).toBe(3 + 200 + pacingSlackMs(500) - 8);
    const { previous: _, ...noPrevious } = pacing;
    expect(pacingWaitMs(noPrevious, clock)).toBe(3 + 200 + pacingSlackMs(500) - 8);
  });

  it('on a retry, waits the whole gap from the attempt start: the failed attempt may have sent a request', () => {
    const wait = pacingWaitMs(pacing, {
      clockId: CLOCK,
      startedAtMs: 20_000,
      nowMs: 20_004,
      firstAttempt: false,
    });
    expect(wait).toBe(20_000 + 500 + pacingSlackMs(500) - 20_004);
  });
});

describe('handoffMs', () => {
  it('leaves at most MAX_HANDOFF_MS to the activity, never more than the gap', () => {
    expect(handoffMs(500, 1_000)).toBe(MAX_HANDOFF_MS);
    expect(handoffMs(10_000)).toBe(INITIAL_HANDOFF_MS);
    expect(handoffMs(40)).toBe(40);
    expect(handoffMs(0)).toBe(0);
  });
});

describe('skewedJitterMs', () => {
  it('stays within 0 … ratio × gap', () => {
    expect(skewedJitterMs(500, 0.1, 0)).toBe(0);
    expect(skewedJitterMs(500, 0.1, 0.999_999)).toBeLessThanOrEqual(50);
    expect(skewedJitterMs(500, 0, 0.7)).toBe(0);
  });

  it('costs a quarter of the range on average while keeping the spread of a uniform draw', () => {
    const n = 100_000;
    const draws = Array.from({ length: n }, (_, i) => skewedJitterMs(10_000, 0.1, (i + 0.5) / n));
    const mean = draws.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(draws.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
    expect(mean / 10_000).toBeCloseTo(0.025, 3);
    // A uniform draw over 0–10 % has a standard deviation of 2.89 % of the gap.
    expect(sd / 10_000).toBeGreaterThan(0.027);
  });
});

describe('nextHandoffMs', () => {
  it('leaves the activity about 40 ms to wait after the overhead the last lap measured', () => {
    // 100 ms handed off, 70 waited: the workflow side took 30 ms; next time hand off 30 + 40.
    expect(nextHandoffMs(100, 70)).toBe(70);
    expect(nextHandoffMs(70, 40)).toBe(70);
  });

  it('doubles when nothing was left to wait, within 10 … LAST_LAP_MAX_HANDOFF_MS', () => {
    expect(nextHandoffMs(100, 0)).toBe(200);
    expect(nextHandoffMs(200, 0)).toBe(LAST_LAP_MAX_HANDOFF_MS);
    expect(nextHandoffMs(20, 19)).toBe(41);
    expect(nextHandoffMs(10, 200)).toBe(10);
  });

  it('is what handoffMs then hands off, never more than the gap', () => {
    expect(handoffMs(500, nextHandoffMs(100, 70))).toBe(70);
    expect(handoffMs(40, 200)).toBe(40);
  });
});

describe('pacingLatenessMs', () => {
  const pacing = { gapMs: 500, handoffMs: 200, previous: { clockId: CLOCK, atMs: 10_000 } };
  const end = 10_000 + 500 + pacingSlackMs(500);

  it('is how far past the gap the activity came, on the clock that saw the previous response', () => {
    expect(pacingLatenessMs(pacing, { clockId: CLOCK, nowMs: end + 37, firstAttempt: true })).toBe(37);
    expect(pacingLatenessMs(pacing, { clockId: CLOCK, nowMs: end - 80, firstAttempt: true })).toBe(0);
  });

  it('cannot tell on another clock, without a previous response, or on a retry', () => {
    expect(
      pacingLatenessMs(pacing, { clockId: 'clock-b', nowMs: end + 37, firstAttempt: true }),
    ).toBeUndefined();
    const { previous: _, ...noPrevious } = pacing;
    expect(
      pacingLatenessMs(noPrevious, { clockId: CLOCK, nowMs: end + 37, firstAttempt: true }),
    ).toBeUndefined();
    expect(
      pacingLatenessMs(pacing, { clockId: CLOCK, nowMs: end + 37, firstAttempt: false }),
    ).toBeUndefined();
  });
});

describe('the smoothed hand-off', () => {
  it("measures a lap's overhead from the wait left, or from the lateness when none was", () => {
    expect(lapOverheadMs(200, 150)).toBe(50);
    expect(lapOverheadMs(200, 0, 35)).toBe(235);
    expect(lapOverheadMs(200, 0, 0)).toBe(200);
    // Late by an unknown amount: counted as a hand-off more.
    expect(lapOverheadMs(200, 0)).toBe(400);
  });

  it('smooths the mean by 1/8 and the deviation by 1/4 of each new lap', () => {
    const first = nextHandoffOverhead(undefined, 80);
    expect(first).toEqual({ meanMs: 80, devMs: 40 });
    const second = nextHandoffOverhead(first, 160);
    expect(second.meanMs).toBe(90);
    expect(second.devMs).toBe(50);
  });

  it('hands off the mean and four deviations, within 10 … MAX_HANDOFF_MS', () => {
    expect(handoffForOverhead({ meanMs: 60, devMs: 10 })).toBe(100);
    expect(handoffForOverhead({ meanMs: 200, devMs: 50 })).toBe(MAX_HANDOFF_MS);
    expect(handoffForOverhead({ meanMs: 170, devMs: 40 })).toBe(330);
    expect(handoffForOverhead({ meanMs: 1, devMs: 0 })).toBe(10);
  });

  it('comes late on far fewer laps than learning from the last lap alone, when the overhead swings', () => {
    // Overheads drawn around 100 ms with a spread of ±60 ms (a loaded two-core machine), replayed
    // through both learners: a lap is late when its overhead exceeds the hand-off it was given.
    let seed = 7;
    const uniform = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const overheads = Array.from({ length: 2_000 }, () => 40 + 120 * uniform());
    let lastLap = INITIAL_HANDOFF_MS;
    let smoothed: HandoffOverhead | undefined;
    let smoothedHandoff = INITIAL_HANDOFF_MS;
    let lateLastLap = 0;
    let lateSmoothed = 0;
    for (const overhead of overheads) {
      if (overhead > lastLap) lateLastLap++;
      lastLap = nextHandoffMs(lastLap, Math.max(0, lastLap - overhead));
      const waited = Math.max(0, smoothedHandoff - overhead);
      if (overhead > smoothedHandoff) lateSmoothed++;
      smoothed = nextHandoffOverhead(
        smoothed,
        lapOverheadMs(smoothedHandoff, waited, waited > 0 ? undefined : overhead - smoothedHandoff),
      );
      smoothedHandoff = handoffForOverhead(smoothed);
    }
    expect(lateLastLap / overheads.length).toBeGreaterThan(0.15);
    expect(lateSmoothed / overheads.length).toBeLessThan(0.02);
  });
});
