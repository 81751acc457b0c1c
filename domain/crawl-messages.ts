/**
 * The plain data the crawl workflow and its origin workflows send each other, and what the crawl
 * answers and returns: ids, URLs and counts only. Pure types, so the crawl's state
 * (`crawl-state.ts`) and activities can use them without importing workflow code;
 * `workflows/messages.ts` defines the signals and queries that carry them.
 */
import type { CrawlSpec } from './crawl-spec';
import type { FrontierItem } from './frontier';
import type { OriginStats } from './origin-stats';

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
  /**
   * Quota the origin still holds as it asks: more than 0 when it asks ahead (`quota-prefetch-v1`),
   * so an empty budget is answered "nothing more" instead of "exhausted" while it has pages to fetch.
   */
  quotaLeft?: number;
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
  /**
   * Pages this crawl found to copy another (same content hash, SimHash within 3 bits, or
   * rel=canonical), not indexed: new or changed pages that are copies and known pages that became
   * copies — the crawl's `duplicate` change events. An unchanged page already known as a copy
   * counts in `pagesUnchanged` only.
   */
  pagesDuplicate: number;
  /** Chunks whose vectors this crawl computed (0 for a recrawl of an unchanged site). */
  chunksEmbedded: number;
  /**
   * Stored pages by what they are: `html`, `pdf`, `markdown`, `text`, `docx`. Counted from the store
   * when the crawl finishes (activities/crawl-records.ts) and when it is printed; the workflow's own
   * result has none.
   */
  pagesByType?: Record<string, number>;
  /**
   * Pages the quality gate flagged, by flag (`soft-404`, `near-empty`, `template-only`,
   * `wrong-language`); a page may carry several. Counted from the store like `pagesByType`.
   */
  pagesFlagged?: Record<string, number>;
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

/** Operator control of a crawl (all origins, or one) or of one origin workflow directly. */
export interface ControlCommand {
  action: 'pause' | 'resume' | 'cancel';
  /** With the crawl's signal: only this origin (scheme://host:port); absent: every origin. */
  origin?: string;
  reason?: string;
}
