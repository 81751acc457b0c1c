import { describe, expect, it } from 'vitest';
import {
  lapJitterMs,
  MAX_MS_SINCE_RESPONSE,
  owedAfterTimerMs,
  planLap,
  responseEndedAtMs,
} from '../../../domain/politeness/clock';
import { INITIAL_HANDOFF_MS } from '../../../domain/politeness/request-pacing';

describe('responseEndedAtMs', () => {
  it('dates the response before the activity end, by at most a minute', () => {
    expect(responseEndedAtMs(100_000)).toBe(100_000);
    expect(responseEndedAtMs(100_000, 250)).toBe(99_750);
    expect(responseEndedAtMs(100_000, 10 * MAX_MS_SINCE_RESPONSE)).toBe(100_000 - MAX_MS_SINCE_RESPONSE);
  });
});

describe('lapJitterMs', () => {
  it('draws the skewed jitter or, for older runs, the uniform one', () => {
    expect(lapJitterMs(1_000, 0.1, 0.5, false)).toBe(50);
    expect(lapJitterMs(1_000, 0.1, 0.5, true)).toBe(12);
    expect(lapJitterMs(1_000, 0.1, 0, true)).toBe(0);
  });
});

describe('planLap', () => {
  const base = { baseGapMs: 1_000, jitterMs: 20, handOff: false, nowMs: 10_000 };

  it('waits the whole gap from the last response when nothing is handed off', () => {
    expect(planLap({ ...base, lastFetchAtMs: 9_500 })).toEqual({
      gapMs: 1_020,
      leftToActivityMs: 0,
      lastRequestAtMs: 9_500,
      waitMs: 520,
    });
  });

  it('hands the last stretch to the activity, the learnt hand-off or the initial one', () => {
    expect(planLap({ ...base, handOff: true, lastFetchAtMs: 9_500 })).toMatchObject({
      leftToActivityMs: INITIAL_HANDOFF_MS,
      waitMs: 520 - INITIAL_HANDOFF_MS,
    });
    expect(planLap({ ...base, handOff: true, learntHandoffMs: 30, lastFetchAtMs: 9_500 })).toMatchObject({
      leftToActivityMs: 30,
      waitMs: 490,
    });
  });

  it('hands a short gap to the activity whole, with no timer, and times a longer one', () => {
    // 1,020 ms gap, 500 ms since the response: 520 ms left.
    expect(
      planLap({ ...base, handOff: true, learntHandoffMs: 30, lastFetchAtMs: 9_500, wholeGapUpToMs: 600 }),
    ).toMatchObject({ leftToActivityMs: 520, waitMs: 0 });
    // More left than the bound: the learnt hand-off and a timer for the rest, as before.
    expect(
      planLap({ ...base, handOff: true, learntHandoffMs: 30, lastFetchAtMs: 9_500, wholeGapUpToMs: 500 }),
    ).toMatchObject({ leftToActivityMs: 30, waitMs: 490 });
    // Never without hand-off (fetches beside the loop), and a pause is still waited on the timer.
    expect(planLap({ ...base, lastFetchAtMs: 9_500, wholeGapUpToMs: 600 })).toMatchObject({
      leftToActivityMs: 0,
      waitMs: 520,
    });
    expect(
      planLap({ ...base, handOff: true, lastFetchAtMs: 9_500, wholeGapUpToMs: 600, pausedUntilMs: 12_000 }),
    ).toMatchObject({ leftToActivityMs: 520, waitMs: 2_000 });
    // Before the first request nothing is owed: nothing handed, no timer.
    expect(planLap({ ...base, handOff: true, wholeGapUpToMs: 600 }).waitMs).toBeLessThanOrEqual(0);
  });

  it('runs from the later of the last response and the last start beside the loop', () => {
    expect(planLap({ ...base, lastFetchAtMs: 9_000, lastStartAtMs: 9_800 })).toMatchObject({
      lastRequestAtMs: 9_800,
      waitMs: 820,
    });
  });

  it('waits out a pause of the origin, and does not wait before the first request', () => {
    expect(planLap({ ...base, pausedUntilMs: 40_000 }).waitMs).toBe(30_000);
    expect(planLap(base).waitMs).toBeLessThanOrEqual(0);
  });
});

describe('owedAfterTimerMs', () => {
  it('owes the hand-off, less what the timer overslept', () => {
    const plan = planLap({ ...base(), handOff: true, learntHandoffMs: 100, lastFetchAtMs: 9_000 });
    expect(owedAfterTimerMs(plan, 9_900)).toBe(100);
    expect(owedAfterTimerMs(plan, 9_980)).toBe(20);
    expect(owedAfterTimerMs(plan, 10_100)).toBeLessThanOrEqual(0);
  });

  function base() {
    return { baseGapMs: 1_000, jitterMs: 0, handOff: false, nowMs: 9_000 };
  }
});
