/**
 * The origin workflow's recrawl steps: claim the origin's known pages from the store once, top
 * the frontier up from those claims due-first (what each visit found is counted in
 * `domain/origin-stats.ts`).
 * Deterministic: activities are proxied, everything else is arithmetic on plain data.
 */
import type { FetchSpec } from '../activities/types';
import type { CrawlSpec } from '../domain/crawl-spec';
import type { FrontierItem } from '../domain/frontier';
import type { KnownPagesCursor } from '../domain/origin-state';
import { claimKnownPages, nextKnownUrls } from './origin-activities';

/** Known URLs are pulled from Postgres in pages of this size when the frontier runs low. */
const KNOWN_PAGE = 200;
const KNOWN_LOW_WATER = 50;
/**
 * Due known pages go before anything the crawl discovers (frontier scores stay below 10), pages
 * not due yet after it; within each, the order Postgres gave (earliest due first) is kept.
 */
const DUE_PRIORITY = 100;
const NOT_DUE_PRIORITY = -100;

export async function claimKnown(
  spec: CrawlSpec,
  origin: string,
  fetchSpec: FetchSpec,
): Promise<KnownPagesCursor> {
  const claimed = await claimKnownPages({ crawlId: spec.crawlId, origin, spec: fetchSpec });
  return { done: claimed.claimedTotal === 0 || (spec.onlyDue && claimed.due === 0) };
}

/** Pulls the next page of known URLs when the frontier runs low. */
export async function topUpKnown(
  spec: CrawlSpec,
  origin: string,
  known: KnownPagesCursor,
  frontierSize: number,
  push: (item: FrontierItem, priority: number) => void,
  /** A bounded frontier (frontier spill) takes smaller pages; absent: the pages runs always took. */
  bound?: { lowWater: number; page: number },
): Promise<void> {
  if (known.done || frontierSize >= (bound?.lowWater ?? KNOWN_LOW_WATER)) return;
  const page = await nextKnownUrls({
    crawlId: spec.crawlId,
    origin,
    ...(known.cursor ? { afterUrl: known.cursor } : {}),
    limit: bound?.page ?? KNOWN_PAGE,
    onlyDue: spec.onlyDue,
  });
  for (const item of page.items) {
    push({ url: item.url, depth: item.depth }, item.due ? DUE_PRIORITY : NOT_DUE_PRIORITY);
  }
  known.cursor = page.lastUrl ?? known.cursor;
  known.done = page.done;
}
