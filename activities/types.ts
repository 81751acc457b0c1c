/**
 * Inputs and results of every activity: small and serialisable (ids, URLs, hashes, counts).
 * Workflows import this file as types only.
 */
import type { CrawlSpec } from '../domain/crawl-spec';
import type { CrawlSummary } from '../workflows/messages';

/** The part of the crawl spec a fetch needs. */
export type FetchSpec = Pick<
  CrawlSpec,
  | 'scope'
  | 'seeds'
  | 'domains'
  | 'includePrefixes'
  | 'exclude'
  | 'maxDepth'
  | 'userAgent'
  | 'allowHosts'
  | 'maxBodyBytes'
  | 'maxRedirects'
>;

export interface FetchAndStoreInput {
  crawlId: string;
  /** Canonical URL, claimed for this crawl in `crawl_urls`. */
  url: string;
  depth: number;
  spec: FetchSpec;
}

export interface DiscoveredUrl {
  url: string;
  origin: string;
  depth: number;
}

export type FetchOutcomeKind =
  | 'ok'
  | 'robots-blocked'
  | 'not-modified'
  | 'http-error'
  | 'blocked'
  | 'unsupported-content-type'
  | 'too-large'
  | 'redirect-limit'
  | 'network-error';

export interface FetchAndStoreResult {
  outcome: FetchOutcomeKind;
  status?: number;
  finalUrl: string;
  /** Row id in `pages` when the page was stored. */
  pageId?: number;
  contentHash?: string;
  bytes: number;
  linksStored: number;
  /** URLs this page was first to discover in this crawl, in scope and within max depth. */
  discovered: DiscoveredUrl[];
  /** Set when the page could not be stored, in words a user understands. */
  error?: string;
  /** Raw Retry-After of a 429/503 answer, for the workflow's backoff timer. */
  retryAfter?: string;
}

export interface FetchRobotsInput {
  crawlId: string;
  origin: string;
  userAgent: string;
  allowHosts: string[];
}

export interface FetchRobotsResult {
  /** fetched: rules apply; unavailable-allow-all: 4xx; unreachable-disallow-all: the origin is not crawled. */
  source: 'fetched' | 'unavailable-allow-all' | 'unreachable-disallow-all';
  httpStatus?: number;
  /** Crawl-delay for our user agent, in ms, when robots.txt sets one. */
  crawlDelayMs?: number;
  sitemapCount: number;
  error?: string;
}

export interface RegisterCrawlInput {
  spec: CrawlSpec;
  /** Canonical seed URLs. */
  seeds: string[];
}

export interface RegisterCrawlResult {
  /** Seeds not already claimed by this crawl (all of them on a first run). */
  claimed: string[];
}

export interface FinishCrawlInput {
  crawlId: string;
  summary: CrawlSummary;
}

export interface RecordPageInput {
  crawlId: string;
  pageId: number;
}

export interface RecordPageResult {
  indexed: boolean;
}

export interface ActivityApi {
  fetchAndStore(input: FetchAndStoreInput): Promise<FetchAndStoreResult>;
  fetchRobots(input: FetchRobotsInput): Promise<FetchRobotsResult>;
  registerCrawl(input: RegisterCrawlInput): Promise<RegisterCrawlResult>;
  finishCrawl(input: FinishCrawlInput): Promise<void>;
  recordPage(input: RecordPageInput): Promise<RecordPageResult>;
}
