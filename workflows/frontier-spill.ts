/**
 * The origin workflow's side of the frontier spill: its frontier holds at most
 * `spec.frontierMaxUrls` URLs, each fetch is told how much room is left, and what did not fit
 * waits in Postgres until the frontier drains below its low water, then comes back a page at a
 * time. Deterministic: the activities are proxied; the arithmetic is `domain/frontier-spill.ts`.
 */
import type { CrawlSpec } from '../domain/crawl-spec';
import { type Frontier, type FrontierItem, trimTo } from '../domain/frontier';
import { noteSpilled, type SpillState, topUpBounds } from '../domain/frontier-spill';
import { nextSpilledUrls, spillUrls } from './origin-activities';

/** URLs per spillUrls call (the activity's limit). */
const SPILL_CALL_MAX = 500;

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
