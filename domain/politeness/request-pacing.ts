/**
 * The politeness gap, split between the origin workflow's durable timer and the fetch activity.
 *
 * The gap is owed on the origin server's clock: from the end of its previous response to the start
 * of the next request. A durable timer alone overshoots it on every lap by what happens after the
 * workflow reads its clock (the workflow task that starts the timer, the task that schedules the
 * fetch, the activity queue): ~60 ms a lap on an idle machine, more under load. So the workflow
 * sleeps the gap less a hand-off, and the activity waits out the rest just before it sends the
 * request, measured on one monotonic clock from the previous response's end when it received that
 * response itself, else the whole hand-off from its own start. Both bounds hold on their own:
 *  - same clock: previous response end (as received, never earlier than the server sent it)
 *    + gap ≤ this request's send time ≤ the server's receipt of it;
 *  - other clock: the timer fired no earlier than the previous end + gap − hand-off (workflow
 *    time, which never runs ahead of real time), the activity started after it, and waits the
 *    hand-off.
 * Pure: the activity supplies its clock, the workflow its random draw.
 */

/** The end of a response to the origin, on the clock of the process that received it. */
export interface ResponseEnd {
  /** Identifies one process's monotonic clock; readings from another process mean nothing here. */
  clockId: string;
  atMs: number;
}

/** What the fetch activity must still wait before sending its request. */
export interface RequestPacing {
  /** Silence owed between the end of the origin's previous response and this request, in ms. */
  gapMs: number;
  /** The part of the gap the workflow's timer left to the activity, in ms. */
  handoffMs: number;
  /** The previous response's end, as the fetch activity that received it reported it. */
  previous?: ResponseEnd;
}

/**
 * The most of the gap left to the activity: enough to absorb the scheduling overhead of a loaded
 * machine, small enough that a crash mid-wait costs little (the retry waits again anyway). The
 * overhead is the workflow task that starts the timer (its own run is not on the clock it planned
 * with), the timer's lateness, the task that schedules the fetch and the activity queue: ~170 ms
 * on average with a spread of tens of ms on a loaded two-core machine (bench:politeness), which
 * the smoothed hand-off's mean plus four deviations passes.
 */
export const MAX_HANDOFF_MS = 400;
/**
 * The longest gap the origin workflow hands to the fetch activity whole, with no durable timer
 * (`planLap`, `patched('short-gap-handoff-v1')`): the default delay (1 s) and shorter ones. The fetch
 * then holds its slot for most of each lap, so a fetch worker's 64 slots keep ~60 origins at 1 s
 * apiece: far more pages a second than the rest of a two-core machine processes. Longer gaps
 * (a robots.txt Crawl-delay of seconds) are timed, so slots do not sit idle for them.
 */
export const WHOLE_GAP_MAX_MS = 1_000;
/**
 * The cap of the hand-off learnt from the last lap alone (`nextHandoffMs`, runs before
 * `handoff-overhead-v1`): kept, so those runs replay with the hand-offs they planned.
 */
export const LAST_LAP_MAX_HANDOFF_MS = 250;
/** Where the hand-off starts on an origin, before any lap has been measured. */
export const INITIAL_HANDOFF_MS = 100;
const MIN_HANDOFF_MS = 10;
/** What the activity should be left to wait: the margin against the next lap's overhead being larger. */
const TARGET_WAIT_MS = 40;

/**
 * The next lap's hand-off from this lap's: the activity waited `waitedMs` of it, so the workflow's
 * side (timer lateness, two workflow tasks, the queue) took the rest. Aim for the activity waiting
 * TARGET_WAIT_MS: a waiting activity holds one of its worker's fetch slots, so with many origins a
 * fixed large hand-off would make the slots the limit. Nothing waited means the overhead outgrew
 * the hand-off: double it. Any hand-off keeps the gap: the timer always covered the rest.
 */
export function nextHandoffMs(currentMs: number, waitedMs: number): number {
  const next = waitedMs <= 0 ? currentMs * 2 : currentMs - waitedMs + TARGET_WAIT_MS;
  return boundedHandoffMs(next, LAST_LAP_MAX_HANDOFF_MS);
}

/** A learnt hand-off, whole milliseconds within MIN_HANDOFF_MS … `capMs`. */
function boundedHandoffMs(ms: number, capMs: number): number {
  return Math.round(Math.max(MIN_HANDOFF_MS, Math.min(capMs, ms)));
}

/**
 * The scheduling overhead a hand-off must cover (from the timer's end to the request: a workflow
 * task, the activity queue, the activity's own start), smoothed over laps: its mean and mean
 * deviation, as RFC 6298 smooths a round-trip time.
 */
export interface HandoffOverhead {
  meanMs: number;
  devMs: number;
}

/**
 * One lap's overhead, from what the fetch activity reported: the hand-off less what it still waited
 * of it, or, when it waited nothing, the whole hand-off plus how late it came (`lateMs`); unknown
 * lateness (another process's clock) counts as a hand-off more.
 */
export function lapOverheadMs(handoffMs: number, waitedMs: number, lateMs?: number): number {
  if (waitedMs > 0) return Math.max(0, handoffMs - waitedMs);
  return handoffMs + (lateMs ?? handoffMs);
}

/** The smoothed overhead after one more lap's (gains 1/8 and 1/4, RFC 6298 §2). */
export function nextHandoffOverhead(
  previous: HandoffOverhead | undefined,
  sampleMs: number,
): HandoffOverhead {
  if (!previous) return { meanMs: sampleMs, devMs: sampleMs / 2 };
  return {
    meanMs: previous.meanMs + (sampleMs - previous.meanMs) / 8,
    devMs: previous.devMs + (Math.abs(sampleMs - previous.meanMs) - previous.devMs) / 4,
  };
}

/**
 * The hand-off for a smoothed overhead: its mean and four deviations (RFC 6298's margin), so a lap
 * whose scheduling takes longer than usual still finds the activity early. Learning from the last
 * lap alone (`nextHandoffMs`) left a margin of TARGET_WAIT_MS: where the overhead swings by more
 * than that from one lap to the next (a loaded machine), the activity came late on 21–34 % of laps
 * in a simulation with swings of 120–200 ms, against 0.1 % with this rule (which waits 60–190 ms
 * more of each lap in the activity, holding its fetch slot).
 */
export function handoffForOverhead(overhead: HandoffOverhead): number {
  return boundedHandoffMs(overhead.meanMs + 4 * overhead.devMs, MAX_HANDOFF_MS);
}

/**
 * How late the fetch activity is for its request, in ms past the end of the gap (0 when it must
 * still wait), measured on the clock that saw the previous response; undefined on another clock or
 * a retry, where it cannot tell.
 */
export function pacingLatenessMs(
  pacing: RequestPacing,
  clock: { clockId: string; nowMs: number; firstAttempt: boolean },
): number | undefined {
  const previous = pacing.previous;
  if (!clock.firstAttempt || !previous || previous.clockId !== clock.clockId) return undefined;
  return Math.max(0, clock.nowMs - (previous.atMs + pacing.gapMs + pacingSlackMs(pacing.gapMs)));
}

/**
 * Slack added to every in-activity wait: the origin may log with a wall clock truncated to whole
 * milliseconds that is slewed against our monotonic clock (NTP slews at most 0.05 %).
 */
export function pacingSlackMs(gapMs: number): number {
  return 1 + Math.ceil(gapMs / 1000);
}

/** How much of `gapMs` the workflow leaves to the activity, given the origin's learnt hand-off. */
export function handoffMs(gapMs: number, learntMs = INITIAL_HANDOFF_MS): number {
  return Math.max(0, Math.min(gapMs, learntMs, MAX_HANDOFF_MS));
}

/**
 * The jitter added to the gap: up to `ratio × gap`, drawn as `u³` of the range (u uniform in [0, 1)).
 * The jitter is there so the cadence is not machine-regular (seed 004: "random jitter applied to
 * delay"); what makes a cadence irregular is the spread, and every millisecond of mean is lost
 * throughput. A uniform draw over 0–10 % costs a mean of 5 % of the gap (the rate can reach at most
 * 0.952 of the politeness ceiling) for a standard deviation of 2.9 %; u³ over the same range costs
 * 2.5 % for a standard deviation of 2.8 %. It is never negative: the gap is a floor.
 */
export function skewedJitterMs(gapMs: number, ratio: number, uniform: number): number {
  return Math.floor(gapMs * ratio * uniform ** 3);
}

/**
 * Milliseconds the activity waits before its request. `startedAtMs` and `nowMs` are on the clock
 * `clockId`; `firstAttempt` is false on a Temporal retry, whose earlier attempt may have sent a
 * request whose end nobody recorded: then the whole gap is waited from this attempt's start.
 */
export function pacingWaitMs(
  pacing: RequestPacing,
  clock: { clockId: string; startedAtMs: number; nowMs: number; firstAttempt: boolean },
): number {
  const slack = pacingSlackMs(pacing.gapMs);
  if (!clock.firstAttempt) return Math.max(0, clock.startedAtMs + pacing.gapMs + slack - clock.nowMs);
  const previous = pacing.previous;
  if (previous && previous.clockId === clock.clockId) {
    return Math.max(0, previous.atMs + pacing.gapMs + slack - clock.nowMs);
  }
  return Math.max(0, clock.startedAtMs + pacing.handoffMs + slack - clock.nowMs);
}
