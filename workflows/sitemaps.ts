/**
 * The origin's sitemap URLs: claimed into Postgres once (the activity returns counts only, never
 * URLs, so history stays small), then pulled into the frontier a page at a time as it runs low.
 */
import { ingestSitemaps, nextClaimedUrls } from './origin-activities';
import { fetchSpecOf } from './origin-fetch';
import type { OriginRun } from './origin-run';

/** Sitemap URLs are pulled in pages of this size once the frontier holds fewer than the low water. */
export const SITEMAP_PAGE = 200;
export const SITEMAP_LOW_WATER = 50;

/** Claims the origin's sitemap URLs, after the origin's gap; a failure means "no sitemap". */
export async function readSitemaps(run: OriginRun): Promise<void> {
  const { spec, origin, state, lap } = run;
  await lap.waitGap();
  try {
    const result = await ingestSitemaps({
      crawlId: spec.crawlId,
      origin,
      spec: fetchSpecOf(spec),
      // The activity keeps the same gap between its own sitemap requests.
      delayMs: lap.gapMs(),
      maxUrlsPerOrigin: Math.min(50_000, spec.maxPages),
    });
    state.sitemaps = { done: result.claimedTotal === 0 };
    if (result.errors[0]) state.stats.lastError = `${origin} sitemap: ${result.errors[0]}`;
  } catch (error) {
    state.sitemaps = { done: true };
    state.stats.lastError = `${origin} sitemap: ${(error as Error).message}`;
  }
  lap.requestEnded();
}

/** Pulls the next `limit` claimed sitemap URLs into the frontier. */
export async function topUpFromSitemaps(
  run: OriginRun,
  sitemaps: { cursor?: string; done: boolean },
  limit: number,
): Promise<void> {
  const { spec, origin } = run;
  const page = await nextClaimedUrls({
    crawlId: spec.crawlId,
    origin,
    ...(sitemaps.cursor ? { afterUrl: sitemaps.cursor } : {}),
    limit,
    source: 'sitemap',
  });
  for (const item of page.items) run.enqueue(item, { fromSitemap: true });
  sitemaps.cursor = page.lastUrl ?? sitemaps.cursor;
  sitemaps.done = page.done;
}
