/**
 * The politeness wait outside workflows: every request an activity (or the exporter) sends to an
 * origin first waits here for what the origin is still owed.
 *  - The fetch activity waits the last stretch of the gap the origin workflow's timer handed it
 *    (`waitForHandoff`, arithmetic in `domain/politeness/request-pacing.ts`).
 *  - A sender of several requests of its own — a sitemap read, a rendered page's subresources, an
 *    export's images — keeps the origin's gap (`domain/politeness/gap.ts`) from the end of its last
 *    response there to its next request (`RequestSpacing`). Its first request does not wait: the
 *    origin workflow waited the gap before it started the activity, or nothing preceded it.
 * Measured on this process's monotonic clock (a wall clock may step), and measured again after each
 * sleep: a timer may fire a little before its time.
 */
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { gapLeftMs } from '../domain/politeness/gap';
import { pacingLatenessMs, pacingWaitMs, type RequestPacing } from '../domain/politeness/request-pacing';
import { PROCESS_CLOCK_ID, processClockMs } from './process-clock';

/** Sleeps `ms` and rejects once cancelled: an activity's `Context.sleep`, or `abortableSleep`. */
export type Sleep = (ms: number) => Promise<void>;

/** A timer that rejects when `signal` aborts (a cancelled activity stops waiting at once). */
export function abortableSleep(signal?: AbortSignal): Sleep {
  return (ms) => sleepTimer(ms, undefined, signal ? { signal } : undefined);
}

/** Sleeps until `leftMs(now)` is ≤ 0 on the process clock; returns how long that took. */
export async function waitOut(leftMs: (nowMs: number) => number, sleep: Sleep): Promise<number> {
  const startMs = processClockMs();
  for (;;) {
    const waitMs = leftMs(processClockMs());
    if (waitMs <= 0) return processClockMs() - startMs;
    await sleep(Math.ceil(waitMs));
  }
}

/**
 * The fetch activity's wait, as late as possible before its request: the part of the gap the
 * workflow left to it. `startedAtMs` is the activity's start on the process clock; a retry
 * (`firstAttempt` false) waits the whole gap from it. Returns how long it waited.
 */
export function waitForHandoff(
  pacing: RequestPacing,
  attempt: { startedAtMs: number; firstAttempt: boolean },
  sleep: Sleep,
): Promise<number> {
  return waitOut(
    (nowMs) =>
      pacingWaitMs(pacing, {
        clockId: PROCESS_CLOCK_ID,
        startedAtMs: attempt.startedAtMs,
        nowMs,
        firstAttempt: attempt.firstAttempt,
      }),
    sleep,
  );
}

/**
 * How late the fetch activity is now for the request `pacing` paces (0: it must still wait), when
 * this process saw the origin's previous response; undefined otherwise. Reported to the origin
 * workflow, which learns its next hand-off from it (`handoffForOverhead`).
 */
export function handoffLatenessMs(
  pacing: RequestPacing,
  attempt: { firstAttempt: boolean },
): number | undefined {
  return pacingLatenessMs(pacing, {
    clockId: PROCESS_CLOCK_ID,
    nowMs: processClockMs(),
    firstAttempt: attempt.firstAttempt,
  });
}

/**
 * The gap between the requests one sender makes itself, per origin: `wait` before each request,
 * `ended` as its response ends (or fails). One request at a time per origin is the caller's part.
 */
export class RequestSpacing {
  private readonly lastEndedMs = new Map<string, number>();

  constructor(private readonly sleep: Sleep) {}

  /** What is left of `gapMs` now since `origin`'s last response ended; ≤ 0 when nothing is. */
  leftMs(origin: string, gapMs: number): number {
    return gapLeftMs(gapMs, this.lastEndedMs.get(origin), processClockMs());
  }

  /** Waits until `gapMs` has passed since `origin`'s last response ended; returns how long it waited. */
  wait(origin: string, gapMs: number): Promise<number> {
    return waitOut((nowMs) => gapLeftMs(gapMs, this.lastEndedMs.get(origin), nowMs), this.sleep);
  }

  /** A response from `origin` ended now (or its request failed): the gap runs from here. */
  ended(origin: string): void {
    this.lastEndedMs.set(origin, processClockMs());
  }
}

/** Origins an OffClockRequests remembers at most; the oldest are forgotten first (their gaps long over). */
const OFF_CLOCK_ORIGINS = 10_000;

/**
 * The requests this process makes to an origin outside that origin's own clock: its robots.txt,
 * fetched by whichever activity needs it first, and a redirect hop from another origin's fetch
 * (http → https, apex → www). Each request to an origin first waits out the gap since the last of
 * these: before, a cross-origin hop sent the target's robots.txt and the page back to back, and that
 * origin's own first fetch could follow at once. An origin's own fetches are not recorded, so
 * `perOriginConcurrency` above 1 stays what it says. One process: split fetch workers keep their own.
 */
export class OffClockRequests {
  private readonly lastEndedMs = new Map<string, number>();

  /** What is left of `gapMs` since the last off-clock request to `origin` ended; ≤ 0 when nothing is. */
  leftMs(origin: string, gapMs: number): number {
    return gapLeftMs(gapMs, this.lastEndedMs.get(origin), processClockMs());
  }

  wait(origin: string, gapMs: number, sleep: Sleep): Promise<number> {
    return waitOut((nowMs) => gapLeftMs(gapMs, this.lastEndedMs.get(origin), nowMs), sleep);
  }

  /** An off-clock request to `origin` ended now (or failed). */
  ended(origin: string): void {
    this.lastEndedMs.delete(origin);
    this.lastEndedMs.set(origin, processClockMs());
    if (this.lastEndedMs.size > OFF_CLOCK_ORIGINS) {
      const oldest = this.lastEndedMs.keys().next().value;
      if (oldest !== undefined) this.lastEndedMs.delete(oldest);
    }
  }
}

/** This process's off-clock requests, shared by every activity in it. */
export const offClockRequests = new OffClockRequests();
