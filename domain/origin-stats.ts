/**
 * The counters one origin keeps (the crawl sums them) and the pure rules that count what a fetch,
 * a visit of a known page and a page workflow found. Plain data, so it travels in signals and
 * across continue-as-new.
 */
import type { PageChange } from './revisit';

/** Counters one origin keeps; the crawl sums them. */
export interface OriginStats {
  fetched: number;
  errors: number;
  /** Fetched but not a page (another content type): not an error, not stored. */
  skipped: number;
  links: number;
  indexed: number;
  bytes: number;
  notModified: number;
  robotsBlocked: number;
  /** URLs left unfetched because the origin could not be reached (its robots.txt unreachable). */
  unreachable?: number;
  /** 429/5xx answers that paused the origin and were retried. */
  throttled?: number;
  /** URLs left unfetched because the origin was stopped (repeated 403, cancel). */
  droppedByStop?: number;
  /** Pages stored but not indexed because they said noindex. */
  noindex?: number;
  /** Times the failure-rate circuit breaker paused the origin. */
  circuitOpens?: number;
  /** URLs left unfetched because the crawl's page budget ran out. */
  droppedByBudget: number;
  /** Recrawl change tracking: pages seen for the first time, changed, unchanged, removed. */
  pagesNew?: number;
  pagesChanged?: number;
  pagesUnchanged?: number;
  pagesRemoved?: number;
  /**
   * Pages this crawl found to copy another (exact, near or rel=canonical): not indexed. A known copy
   * seen unchanged is not counted again.
   */
  duplicates?: number;
  /** Chunks embedded by this crawl's page workflows (vectors reused from unchanged chunks excluded). */
  chunksEmbedded?: number;
  /** Workflow time of the first and latest fetch, for a pages/s rate. */
  firstFetchAtMs?: number;
  lastFetchAtMs?: number;
  /** The most recent failure, for people asking "why did it stop?". */
  lastError?: string;
  /** Pages whose stored body is a headless browser's rendered DOM. */
  rendered?: number;
  /** A page's same-origin links left waiting in Postgres because the origin's frontier was full (frontier spill). */
  spilled?: number;
}

export function emptyOriginStats(): OriginStats {
  return {
    fetched: 0,
    errors: 0,
    skipped: 0,
    noindex: 0,
    throttled: 0,
    links: 0,
    indexed: 0,
    bytes: 0,
    notModified: 0,
    robotsBlocked: 0,
    droppedByBudget: 0,
    pagesNew: 0,
    pagesChanged: 0,
    pagesUnchanged: 0,
    pagesRemoved: 0,
    duplicates: 0,
    chunksEmbedded: 0,
  };
}

/** Adds up every counter (the timestamps and the last error are per origin, not summed). */
export function sumStats(all: readonly OriginStats[]): OriginStats {
  const total = emptyOriginStats() as unknown as Record<string, number>;
  for (const stats of all) {
    for (const [key, value] of Object.entries(stats)) {
      if (typeof value !== 'number' || key === 'firstFetchAtMs' || key === 'lastFetchAtMs') continue;
      total[key] = (total[key] ?? 0) + value;
    }
  }
  return total as unknown as OriginStats;
}

/** The counters that may be absent in older runs' stats, plus the ones always there. */
type Counter = {
  [K in keyof OriginStats]-?: OriginStats[K] extends number | undefined ? K : never;
}[keyof OriginStats];

/** Adds `count` to a counter, starting it at 0 when an older run's stats lack it. */
export function addCount(stats: OriginStats, counter: Counter, count = 1): void {
  stats[counter] = (stats[counter] ?? 0) + count;
}

/** What a fetch answered, as far as the counters care. */
export interface FetchAnswer {
  outcome: string;
  error?: string;
  rendered?: boolean;
}

/** Counts a fetch that was not retried: fetched, rendered, not modified, skipped or failed. */
export function countAnswer(stats: OriginStats, url: string, answer: FetchAnswer): void {
  if (answer.outcome === 'ok' || answer.outcome === 'not-modified') stats.fetched++;
  if (answer.rendered) stats.rendered = (stats.rendered ?? 0) + 1;
  if (answer.outcome === 'not-modified') stats.notModified++;
  if (answer.error) {
    if (answer.outcome === 'unsupported-content-type') stats.skipped++;
    else stats.errors++;
    stats.lastError = `${url}: ${answer.error}`;
  }
}

/** What one visit found for the stored page. */
export interface VisitFindings {
  change?: PageChange;
  current?: boolean;
  indexed?: boolean;
  duplicate?: boolean;
}

/** Counts what one fetch found for the stored page (new, changed, unchanged, removed, duplicate). */
export function countVisit(stats: OriginStats, result: VisitFindings): void {
  if (result.change === 'new') stats.pagesNew = (stats.pagesNew ?? 0) + 1;
  if (result.change === 'changed') stats.pagesChanged = (stats.pagesChanged ?? 0) + 1;
  if (result.change === 'unchanged') stats.pagesUnchanged = (stats.pagesUnchanged ?? 0) + 1;
  if (result.change === 'removed') stats.pagesRemoved = (stats.pagesRemoved ?? 0) + 1;
  if (result.current && result.duplicate) stats.duplicates = (stats.duplicates ?? 0) + 1;
  // Unchanged and already searchable: indexed without a page workflow.
  if (result.current && result.indexed) stats.indexed++;
}

/** Whether the stored page still needs its page workflow (extract → chunk → embed). */
export function needsPageWorkflow(result: { pageId?: number; current?: boolean }): boolean {
  return result.pageId !== undefined && result.current !== true;
}

/** What a page workflow (or a batch, per page) did with one page. */
export interface PageOutcome {
  indexed: boolean;
  error?: string;
  chunksEmbedded?: number;
  duplicate?: boolean;
}

/** Counts what page workflows did: indexed or failed, vectors written, near duplicates found. */
export function countPageOutcomes(stats: OriginStats, outcomes: readonly PageOutcome[]): void {
  for (const outcome of outcomes) {
    if (outcome.chunksEmbedded) stats.chunksEmbedded = (stats.chunksEmbedded ?? 0) + outcome.chunksEmbedded;
    if (outcome.duplicate) stats.duplicates = (stats.duplicates ?? 0) + 1;
    if (outcome.indexed) stats.indexed++;
    else if (outcome.error) {
      stats.errors++;
      stats.lastError = outcome.error;
    }
  }
}

/** Pages per second over the origin's fetching so far (0 before a second fetch). */
export function fetchRatePerSecond(stats: OriginStats): number {
  const { firstFetchAtMs, lastFetchAtMs, fetched } = stats;
  const spanMs =
    firstFetchAtMs !== undefined && lastFetchAtMs !== undefined ? lastFetchAtMs - firstFetchAtMs : 0;
  return spanMs > 0 ? ((fetched - 1) * 1000) / spanMs : 0;
}
