/**
 * The origin workflow's politeness lap, on workflow time: what the origin is owed before each
 * request (a durable timer for the gap, its last stretch handed to the fetch activity), when a
 * response ended, and how much of the next gap to hand off. Every request the origin workflow sends
 * — robots.txt, a page fetch, a render, a sitemap read — dates the clock here and waits here; the
 * arithmetic is `domain/politeness/` (the gap in `gap.ts`, the lap in `clock.ts`, the hand-off in
 * `request-pacing.ts`).
 *
 * Holds no state of its own: it reads and writes the origin's durable state, so the clock survives
 * continue-as-new. Replay: one seeded `Math.random()` per planned lap and the timers in the order the
 * loop asks for them, exactly as the loop drew and slept them before this module existed.
 */
import { sleep } from '@temporalio/workflow';
import type { CrawlSpec } from '../domain/crawl-spec';
import type { OriginState } from '../domain/origin-state';
import {
  type LapPlan,
  lapJitterMs,
  owedAfterTimerMs,
  planLap,
  responseEndedAtMs,
} from '../domain/politeness/clock';
import { gapLeftMs, originGapMs } from '../domain/politeness/gap';
import {
  handoffForOverhead,
  lapOverheadMs,
  nextHandoffMs,
  nextHandoffOverhead,
  type RequestPacing,
  type ResponseEnd,
  WHOLE_GAP_MAX_MS,
} from '../domain/politeness/request-pacing';

export interface LapOptions {
  /** `patched('pacing-in-activity-v1')`: skewed jitter and a hand-off; false in runs recorded before. */
  pacedInActivity: boolean;
  /** One request at a time and none in flight: the gap's last stretch may be handed to the fetch. */
  sequential: boolean;
  /** When the last fetch beside the loop started (concurrent fetches). */
  lastStartAtMs: number | undefined;
}

/** What the fetch after a lap's timer is sent with. */
export interface LapHandOff {
  /** The gap's last stretch, for the fetch activity to wait itself; absent when nothing is owed. */
  pacing?: RequestPacing;
  /** The hand-off of a lap whose timer ran, to learn the next one from the fetch's `pacedMs`. */
  timedHandoffMs?: number;
}

export interface PolitenessLap {
  /** The gap the origin is owed now: the crawl's delay, raised by its Crawl-delay. */
  gapMs(): number;
  /** The next lap: its gap (jitter drawn here), the hand-off, and what the timer must wait. */
  plan(options: LapOptions): LapPlan;
  /**
   * Starts the lap's durable timer, `beforeSleep` first with when it will fire; undefined when the
   * lap waits nothing. Not async, and nothing to await without a timer: the loop yields exactly
   * where it yielded before this module, so fetches beside it issue their commands in the same order.
   */
  timer(lap: LapPlan, beforeSleep?: (firesAtMs: number) => void): Promise<void> | undefined;
  /** After the timer: what is still owed goes to the fetch; a timer that overshot doubles the hand-off. */
  handOff(lap: LapPlan): LapHandOff;
  /**
   * A request to the origin ended `msSinceResponse` before now (0: just now, or unknown);
   * `responseEnded` is the fetch activity's own reading of that end, for the next hand-off.
   */
  requestEnded(msSinceResponse?: number, responseEnded?: ResponseEnd): void;
  /**
   * A fetch sent with `timedHandoffMs` waited `pacedMs` of it (or came `lateMs` late): the next
   * lap's hand-off.
   */
  learn(timedHandoffMs: number | undefined, pacedMs: number | undefined, lateMs?: number): void;
  /** Waits out what is left of the gap since the last request, all on the durable timer. */
  waitGap(): Promise<void>;
}

/** Which generation of the lap a run plans with, by the patches its history holds. */
export interface LapGeneration {
  /**
   * `patched('handoff-overhead-v1')`: the hand-off is learnt from the overhead smoothed over laps
   * (`handoffForOverhead`); runs recorded before it learn from the last lap alone (`nextHandoffMs`).
   */
  smoothedHandoff?: boolean;
  /**
   * `patched('short-gap-handoff-v1')`: a gap with at most WHOLE_GAP_MAX_MS left goes to the fetch
   * whole, without a timer (`planLap`); runs recorded before it time every gap they can.
   */
  wholeShortGaps?: boolean;
}

/** The lap of one origin run, over its spec and its durable state. */
export function politenessLap(
  spec: Pick<CrawlSpec, 'delayMs' | 'jitterRatio'>,
  state: OriginState,
  { smoothedHandoff = false, wholeShortGaps = false }: LapGeneration = {},
): PolitenessLap {
  const gapMs = () => originGapMs(spec.delayMs, state.crawlDelayMs);
  /** A lap that handed `handoffMs` to the fetch, which waited `waitedMs` of it (or came `lateMs` late). */
  const learnLap = (handoffMs: number, waitedMs: number, lateMs?: number) => {
    if (!smoothedHandoff) {
      state.handoffMs = nextHandoffMs(handoffMs, waitedMs);
      return;
    }
    state.handoffOverhead = nextHandoffOverhead(
      state.handoffOverhead,
      lapOverheadMs(handoffMs, waitedMs, lateMs),
    );
    state.handoffMs = handoffForOverhead(state.handoffOverhead);
  };
  return {
    gapMs,
    plan({ pacedInActivity, sequential, lastStartAtMs }) {
      const baseGapMs = gapMs();
      return planLap({
        baseGapMs,
        // Workflow Math.random is seeded by Temporal, so the jitter replays identically.
        jitterMs: lapJitterMs(baseGapMs, spec.jitterRatio, Math.random(), pacedInActivity),
        lastFetchAtMs: state.stats.lastFetchAtMs,
        lastStartAtMs,
        handOff: pacedInActivity && sequential,
        learntHandoffMs: state.handoffMs,
        ...(wholeShortGaps ? { wholeGapUpToMs: WHOLE_GAP_MAX_MS } : {}),
        pausedUntilMs: state.pausedUntilMs,
        nowMs: Date.now(),
      });
    },
    timer(lap, beforeSleep) {
      if (lap.waitMs <= 0) return undefined;
      beforeSleep?.(Date.now() + lap.waitMs);
      return sleep(lap.waitMs);
    },
    handOff(lap) {
      const owedMs = owedAfterTimerMs(lap, Date.now());
      // A lap whose timer ran tells how much of the hand-off the scheduling around it used.
      const timed = lap.waitMs > 0 && lap.leftToActivityMs > 0;
      // The timer itself fired past the hand-off: the lap's overhead is more than it, by how much unknown.
      if (timed && owedMs <= 0) learnLap(lap.leftToActivityMs, 0);
      if (owedMs <= 0) return {};
      return {
        pacing: {
          gapMs: lap.gapMs,
          handoffMs: owedMs,
          ...(state.lastResponse ? { previous: state.lastResponse } : {}),
        },
        ...(timed ? { timedHandoffMs: lap.leftToActivityMs } : {}),
      };
    },
    requestEnded(msSinceResponse = 0, responseEnded) {
      // Workflow time less the activity's own time after the response is never earlier than the
      // response's real end, and skips waiting out work that sent nothing to the origin.
      state.stats.lastFetchAtMs = responseEndedAtMs(Date.now(), msSinceResponse);
      state.lastResponse = responseEnded;
    },
    learn(timedHandoffMs, pacedMs, lateMs) {
      if (timedHandoffMs !== undefined && pacedMs !== undefined) learnLap(timedHandoffMs, pacedMs, lateMs);
    },
    async waitGap() {
      const waitMs = gapLeftMs(gapMs(), state.stats.lastFetchAtMs, Date.now());
      if (waitMs > 0) await sleep(waitMs);
    },
  };
}
