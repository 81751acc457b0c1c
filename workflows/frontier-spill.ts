/**
 * The origin workflow's side of the frontier spill: its frontier holds at most
 * `spec.frontierMaxUrls` URLs, each fetch is told how much room is left, and what did not fit
 * waits in Postgres until the frontier drains below its low water, then comes back a page at a
 * time. Deterministic: the one activity is proxied, the rest is arithmetic on plain data.
 */
import type { CrawlSpec } from '../domain/crawl-spec';
import { type Frontier, type FrontierItem, trimTo } from '../domain/frontier';
import { nextSpilledUrls, spillUrls } from './origin-activities';

/** URLs per spillUrls call (the activity's limit). */
const SPILL_CALL_MAX = 500;

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

/** Takes the next page of spilled URLs back when the frontier runs low. */
export async function takeSpilled(
  spec: CrawlSpec,
  origin: string,
  spill: SpillState,
  frontierSize: number,
  push: (item: FrontierItem) => void,
): Promise<void> {
  const { lowWater, page } = topUpBounds(spec.frontierMaxUrls, frontierSize);
  if (!spill.pending || frontierSize >= lowWater) return;
  const take = spill.takes + 1;
  const result = await nextSpilledUrls({ crawlId: spec.crawlId, origin, take, limit: page });
  spill.takes = take;
  for (const item of result.items) push({ url: item.url, depth: item.depth });
  spill.waiting = Math.max(0, spill.waiting - result.items.length);
  spill.pending = result.items.length === page;
}

/**
 * Another origin's links arrive by signal and may overfill the frontier: its lowest-ranked URLs
 * beyond the bound go to Postgres to wait like any spill (at most 500 per activity).
 */
export async function spillOverflow(
  spec: CrawlSpec,
  origin: string,
  spill: SpillState,
  frontier: Frontier,
  push: (item: FrontierItem) => void,
): Promise<number> {
  const overflow = trimTo(frontier, spec.frontierMaxUrls);
  let parked = 0;
  for (let start = 0; start < overflow.length; start += SPILL_CALL_MAX) {
    const part = overflow.slice(start, start + SPILL_CALL_MAX);
    const { missing } = await spillUrls({
      crawlId: spec.crawlId,
      origin,
      urls: part.map((item) => item.url),
    });
    const kept = new Set(missing);
    // A URL Postgres does not hold for this origin stays in memory rather than be lost.
    for (const item of part) if (kept.has(item.url)) push(item);
    if (part.length > missing.length) noteSpilled(spill, part.length - missing.length);
    parked += part.length - missing.length;
  }
  return parked;
}

/** Forgets what waits in Postgres (budget spent, origin stopped); returns how many URLs that was. */
export function dropSpilled(spill: SpillState | undefined): number {
  if (!spill) return 0;
  const dropped = spill.waiting;
  spill.waiting = 0;
  spill.pending = false;
  return dropped;
}
