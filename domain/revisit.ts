/**
 * Adaptive revisit (seed 002 §5, continuous recrawl): each page carries an interval learned from
 * what its visits saw. A change halves it, an unchanged visit stretches it by half, both within
 * bounds, so the politeness budget goes where pages actually move. Pure arithmetic; the fetch
 * activity stores the result as `pages.revisit_interval_ms` and `pages.next_visit_at`.
 */

/** What one visit of a known (or new) page found. */
export type PageChange = 'new' | 'changed' | 'unchanged' | 'removed';

export interface RevisitPolicy {
  /** Interval of a page seen for the first time. @default 1 day */
  initialMs: number;
  /** Shortest interval, however often the page changes. @default 1 hour */
  minMs: number;
  /** Longest interval, however long the page stays the same. @default 30 days */
  maxMs: number;
  /** Factor applied when the page changed. @default 0.5 */
  shrink: number;
  /** Factor applied when it did not. @default 1.5 */
  grow: number;
}

const HOUR_MS = 3_600_000;

export const DEFAULT_REVISIT_POLICY: Readonly<RevisitPolicy> = Object.freeze({
  initialMs: 24 * HOUR_MS,
  minMs: HOUR_MS,
  maxMs: 30 * 24 * HOUR_MS,
  shrink: 0.5,
  grow: 1.5,
});

/**
 * The interval until the next visit, given the previous one (absent for a page never timed) and
 * what this visit found. A removed page is checked again on the slow side: it may come back.
 */
export function nextRevisitIntervalMs(
  previousMs: number | null | undefined,
  change: PageChange,
  policy: Readonly<RevisitPolicy> = DEFAULT_REVISIT_POLICY,
): number {
  const previous =
    previousMs !== null && previousMs !== undefined && Number.isFinite(previousMs) && previousMs > 0
      ? previousMs
      : undefined;
  if (change === 'new' || previous === undefined) return clampMs(policy.initialMs, policy);
  const factor = change === 'changed' ? policy.shrink : policy.grow;
  return clampMs(Math.round(previous * factor), policy);
}

/** A page is due when its next visit time has come, or was never set. */
export function isDue(nextVisitAtMs: number | null | undefined, nowMs: number): boolean {
  return nextVisitAtMs === null || nextVisitAtMs === undefined || nextVisitAtMs <= nowMs;
}

function clampMs(value: number, policy: Readonly<RevisitPolicy>): number {
  return Math.min(policy.maxMs, Math.max(policy.minMs, value));
}
