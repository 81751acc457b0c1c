/**
 * The one rule every request to an origin obeys, whoever sends it (the origin workflow's fetches,
 * renders and sitemap reads, a render's own subresources, an export's images): the silence owed
 * between two requests is the crawl's delay, raised by robots.txt Crawl-delay, never lowered.
 * Pure; each caller measures "since the last request" on its own clock.
 */

/**
 * The crawl spec's default delay (`--delay-ms`, `CrawlSpec.delayMs`): what a request is owed when
 * its caller was given no delay (activity inputs scheduled before they carried one).
 */
export const DEFAULT_DELAY_MS = 1000;

/** The silence owed between two requests to the origin: the crawl's delay, raised by robots Crawl-delay. */
export function originGapMs(delayMs: number | undefined, crawlDelayMs: number | undefined): number {
  return Math.max(delayMs ?? DEFAULT_DELAY_MS, crawlDelayMs ?? 0);
}

/** What is left of `gapMs` at `nowMs` since the request at `lastRequestAtMs`; ≤ 0 when nothing is. */
export function gapLeftMs(gapMs: number, lastRequestAtMs: number | undefined, nowMs: number): number {
  return gapMs - (nowMs - (lastRequestAtMs ?? Number.NEGATIVE_INFINITY));
}
