/**
 * The frontier spill's arithmetic: an origin's frontier holds at most `frontierMaxUrls` URLs, each
 * fetch is told how much room is left, and what did not fit waits in Postgres until the frontier
 * drains below its low water, then comes back a page at a time. Pure; the workflow side (the
 * activities that park and take back URLs) is `workflows/frontier-spill.ts`.
 */

/** Top-ups (spill, sitemap, known pages) pull at most this many URLs at a time… */
const TOP_UP_PAGE = 200;
/** …once the frontier holds fewer than this. */
const TOP_UP_LOW_WATER = 50;

/** Carried across continue-as-new; a few numbers, however many URLs wait in Postgres. */
export interface SpillState {
  /** Rows may be waiting in Postgres: set by a fetch that spilled, cleared by a take that came back short. */
  pending: boolean;
  /** Takes made so far; the next take is named `takes + 1`, so a retried take answers the same. */
  takes: number;
  /** URLs spilled and not yet taken back (progress and drop counts). */
  waiting: number;
}

export function emptySpill(): SpillState {
  return { pending: false, takes: 0, waiting: 0 };
}

/** Same-origin discoveries the next fetch may hand back: the room left beside fetches in flight. */
export function roomFor(bound: number, frontierSize: number, reservedByInFlight: number): number {
  return Math.max(0, bound - frontierSize - reservedByInFlight);
}

/** When a bounded frontier tops up and how much it takes, so a top-up never overfills it. */
export function topUpBounds(bound: number, frontierSize: number): { lowWater: number; page: number } {
  return {
    lowWater: Math.min(TOP_UP_LOW_WATER, Math.floor(bound / 2)),
    page: Math.max(1, Math.min(TOP_UP_PAGE, bound - frontierSize)),
  };
}

export function noteSpilled(spill: SpillState, count: number): void {
  spill.pending = true;
  spill.waiting += count;
}

/** Forgets what waits in Postgres (budget spent, origin stopped); returns how many URLs that was. */
export function dropSpilled(spill: SpillState | undefined): number {
  if (!spill) return 0;
  const dropped = spill.waiting;
  spill.waiting = 0;
  spill.pending = false;
  return dropped;
}
