/**
 * The origin workflow's politeness clock, as arithmetic on workflow time: when the origin's last
 * request ended, and each lap's wait before the next fetch (the part the durable timer waits and
 * the part handed to the fetch activity, `request-pacing.ts`). The gap itself is `gap.ts`'s.
 * Pure: the workflow supplies its clock (`Date.now()`, workflow time) and its seeded random draw.
 */
import { handoffMs, skewedJitterMs } from './request-pacing';

/**
 * Time an activity may report between the end of the origin's response and its own end (storage);
 * more is not believed, so a slow database cannot date a response far in the past.
 */
export const MAX_MS_SINCE_RESPONSE = 60_000;

/**
 * When the origin's response ended, on workflow time: the activity's completion (`nowMs`, never
 * earlier than its real end) less the time it spent after the response.
 */
export function responseEndedAtMs(nowMs: number, msSinceResponse = 0): number {
  return nowMs - Math.min(msSinceResponse, MAX_MS_SINCE_RESPONSE);
}

/**
 * The jitter added to a lap's gap from one uniform draw in [0, 1): skewed (`u³`, runs with pacing in
 * the activity) or uniform (runs recorded before it).
 */
export function lapJitterMs(baseGapMs: number, ratio: number, uniform: number, skewed: boolean): number {
  return skewed ? skewedJitterMs(baseGapMs, ratio, uniform) : Math.floor(uniform * baseGapMs * ratio);
}

export interface LapInput {
  /** The origin's gap (`originGapMs`) and this lap's jitter. */
  baseGapMs: number;
  jitterMs: number;
  /** The end of the origin's last request (workflow time). */
  lastFetchAtMs?: number;
  /** The start of the last fetch sent beside the loop (concurrent fetches). */
  lastStartAtMs?: number;
  /** One request at a time with pacing in the activity: the gap's last stretch is handed to it. */
  handOff: boolean;
  /** The hand-off learnt on this origin (`nextHandoffMs`), if any. */
  learntHandoffMs?: number;
  /**
   * With `handOff`: a gap with at most this much left is handed to the activity whole, and the lap
   * takes no durable timer (`patched('short-gap-handoff-v1')`; absent in runs recorded before).
   */
  wholeGapUpToMs?: number;
  /** The origin is paused (throttled, circuit open) until then. */
  pausedUntilMs?: number;
  nowMs: number;
}

export interface LapPlan {
  /** The gap owed before the next request, jitter included. */
  gapMs: number;
  /** The part of the gap left to the fetch activity (0 when none is handed off). */
  leftToActivityMs: number;
  /** The later of the last request's end and the last start beside the loop. */
  lastRequestAtMs: number;
  /** What the durable timer waits now; ≤ 0: no timer. */
  waitMs: number;
}

/**
 * One lap of the loop: the gap runs from the end of the previous fetch (workflow time is never
 * earlier than the activity's real completion), or with fetches in flight from the later of the
 * last start and the last response; a pause of the origin may make the wait longer.
 *
 * A short gap (at most `wholeGapUpToMs` left) goes to the activity whole. A timer for its first part
 * would put two workflow tasks on the lap (the one that starts the timer and the one after it fires,
 * ~130 ms each on a loaded two-core machine) where their work could run inside the gap instead; it
 * cost five history events a page as well (the timer's two and the second task's three).
 */
export function planLap(lap: LapInput): LapPlan {
  const gapMs = lap.baseGapMs + lap.jitterMs;
  const lastRequestAtMs = Math.max(
    lap.lastFetchAtMs ?? Number.NEGATIVE_INFINITY,
    lap.lastStartAtMs ?? Number.NEGATIVE_INFINITY,
  );
  const gapLeftMs = gapMs - (lap.nowMs - lastRequestAtMs);
  const learntMs = lap.handOff ? handoffMs(gapMs, lap.learntHandoffMs) : 0;
  const whole = lap.handOff && lap.wholeGapUpToMs !== undefined && gapLeftMs <= lap.wholeGapUpToMs;
  const leftToActivityMs = whole ? Math.max(learntMs, gapLeftMs) : learntMs;
  const waitMs = Math.max(gapLeftMs - leftToActivityMs, (lap.pausedUntilMs ?? 0) - lap.nowMs);
  return { gapMs, leftToActivityMs, lastRequestAtMs, waitMs };
}

/** What the timer left of the gap, measured again at `nowMs`, once the timer has fired. */
export function owedAfterTimerMs(plan: LapPlan, nowMs: number): number {
  return Math.min(plan.leftToActivityMs, plan.gapMs - (nowMs - plan.lastRequestAtMs));
}
