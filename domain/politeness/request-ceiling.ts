/**
 * The crawl's global request ceiling (seed 003's GLOBAL_QPS, `CrawlSpec.maxRequestsPerSecond`): a
 * bound on requests per second summed over every origin, on top of each origin's own gap. The crawl
 * enforces it where it hands out page quota: with a ceiling, quota goes out one page at a time and
 * no sooner than 1 / ceiling after the previous grant; the crawl workflow waits the difference on a
 * durable timer and keeps the next grant's time in its state. Pure arithmetic, times in ms.
 */

/** Pages one grant carries under a ceiling: every page's request is paced. */
export const PAGES_PER_PACED_GRANT = 1;

/** A ceiling of 0 (the default) means none: quota is granted as asked, at once. */
export function hasRequestCeiling(maxRequestsPerSecond: number): boolean {
  return maxRequestsPerSecond > 0;
}

/** How long a grant asked for at `nowMs` waits; 0 when `nextGrantAtMs` has passed or was never set. */
export function ceilingWaitMs(nextGrantAtMs: number | undefined, nowMs: number): number {
  return Math.max(0, (nextGrantAtMs ?? 0) - nowMs);
}

/** When the grant after one made at `grantedAtMs` may go out. */
export function nextGrantAtMs(grantedAtMs: number, maxRequestsPerSecond: number): number {
  return grantedAtMs + 1000 / maxRequestsPerSecond;
}
