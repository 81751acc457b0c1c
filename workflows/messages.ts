/**
 * Signals, queries and the small serialisable types that cross workflow boundaries.
 * Only ids, URLs and counts travel here — never page bodies (history stays small).
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CrawlSpec } from '../domain/crawl-spec';
import type { FrontierItem } from '../domain/frontier';

export type { FrontierItem } from '../domain/frontier';

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
  /** Pages found to copy another (exact, near or rel=canonical): not indexed. */
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

export type OriginPhase = 'robots' | 'paused' | 'fetching' | 'sleeping' | 'waiting-quota' | 'idle' | 'done';

export interface OriginProgress {
  origin: string;
  workflowId: string;
  phase: OriginPhase;
  queued: number;
  stats: OriginStats;
  /** Pages per second over this origin's fetching so far. */
  ratePerSecond: number;
}

/** Origin → crawl: state changes the crawl needs for budget and termination. */
export interface OriginReport {
  origin: string;
  /** How many enqueue batches the origin has received; the crawl counts what it sent. */
  receivedBatches: number;
  idle: boolean;
  done: boolean;
  stats: OriginStats;
  /** Page quota handed back (the origin ran dry with some left). */
  returnedQuota: number;
  /** Pages the origin would fetch now if allowed; 0 when it asks for nothing. */
  quotaWanted: number;
}

/** Origin → crawl: URLs of other origins, grouped by origin, for the crawl to route. */
export interface DiscoveredBatch {
  byOrigin: Record<string, FrontierItem[]>;
}

export interface EnqueueBatch {
  seq: number;
  items: FrontierItem[];
}

export interface QuotaGrant {
  granted: number;
  /** The crawl's page budget is spent: drop what is queued. */
  exhausted: boolean;
}

export interface CrawlSummary {
  crawlId: string;
  status: 'completed' | 'failed' | 'cancelled';
  pagesFetched: number;
  pagesIndexed: number;
  links: number;
  errors: number;
  /** Responses that were not HTML pages. */
  skipped: number;
  robotsBlocked: number;
  /** URLs never fetched because their origin was unreachable (not counted as robots-blocked). */
  unreachable?: number;
  /** Pages stored but not indexed because they said noindex. */
  noindex: number;
  /** 429/5xx answers after which the origin paused and retried. */
  throttled: number;
  /** Times an origin's failure-rate circuit breaker paused it. */
  circuitOpens: number;
  notModified: number;
  bytes: number;
  origins: number;
  droppedByBudget: number;
  /** Pages rendered in a headless browser (counted in pagesFetched too). */
  pagesRendered: number;
  /** Visited pages never stored before. */
  pagesNew: number;
  /** Visited known pages whose content changed (or that came back after removal). */
  pagesChanged: number;
  /** Visited known pages answering 304 or the same content hash. */
  pagesUnchanged: number;
  /** Known pages that answered 404/410 or now say noindex: removed from search, kept as tombstones. */
  pagesRemoved: number;
  /** Pages that copy another (same content hash, SimHash within 3 bits, or rel=canonical): not indexed. */
  pagesDuplicate: number;
  /** Chunks whose vectors this crawl computed (0 for a recrawl of an unchanged site). */
  chunksEmbedded: number;
  /** Why the crawl counts as failed (e.g. every seed unreachable). */
  failureReason?: string;
  durationMs: number;
}

export interface CrawlProgress {
  crawlId: string;
  phase: 'starting' | 'crawling' | 'finishing' | 'done';
  /** Origins paused by an operator. */
  paused: string[];
  cancelled: boolean;
  spec: CrawlSpec;
  pageBudgetLeft: number;
  origins: Array<{ origin: string; workflowId: string; idle: boolean; done: boolean; stats: OriginStats }>;
  totals: OriginStats;
  startedAtMs: number;
}

export const originReportSignal = defineSignal<[OriginReport]>('originReport');
export const discoveredSignal = defineSignal<[DiscoveredBatch]>('discovered');
export const enqueueSignal = defineSignal<[EnqueueBatch]>('enqueue');
export const quotaSignal = defineSignal<[QuotaGrant]>('quota');
export const finishSignal = defineSignal('finish');

/** Operator control of a crawl (all origins, or one) or of one origin workflow directly. */
export interface ControlCommand {
  action: 'pause' | 'resume' | 'cancel';
  /** With the crawl's signal: only this origin (scheme://host:port); absent: every origin. */
  origin?: string;
  reason?: string;
}
export const controlSignal = defineSignal<[ControlCommand]>('control');

export const crawlProgressQuery = defineQuery<CrawlProgress>('progress');
export const originProgressQuery = defineQuery<OriginProgress>('originProgress');

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
