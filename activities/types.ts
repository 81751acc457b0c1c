/**
 * Inputs and results of every activity: small and serialisable (ids, URLs, hashes, counts).
 * Workflows import this file as types only.
 */

import type { CrawlSummary } from '../domain/crawl-messages';
import type { CrawlSpec } from '../domain/crawl-spec';
import type { RequestPacing, ResponseEnd } from '../domain/politeness/request-pacing';
import type { PageChange } from '../domain/revisit';
import type { EmbedPageInput, EmbedPageResult, EmbedPagesInput, EmbedPagesResult } from './embed-chunks';
import type { RecleanSiteTemplateInput, RecleanSiteTemplateResult } from './site-templates';
import type { LlmPassInput, LlmPassResult } from './summarize-llm';
import type { SummarizePageInput, SummarizePageResult } from './summarize-offline';

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
> &
  // delayMs: the render activity keeps the origin's gap between a page's own requests (absent in
  // inputs scheduled before it was passed: then the spec's default delay applies, `originGapMs`).
  Partial<Pick<CrawlSpec, 'bodyTimeoutMs' | 'delayMs'>> &
  // contentTypes: absent in inputs scheduled before documents were fetched (then every type is).
  Partial<Pick<CrawlSpec, 'contentTypes'>> &
  // lang: links whose hreflang names another language are not followed (absent: all are).
  Partial<Pick<CrawlSpec, 'lang'>>;

export interface FetchAndStoreInput {
  crawlId: string;
  /** Canonical URL, claimed for this crawl in `crawl_urls`. */
  url: string;
  depth: number;
  spec: FetchSpec;
  /** Judge whether the HTML needs a browser (render 'auto'); the verdict comes back in the result. */
  assessRender?: boolean;
  /**
   * Room left in the origin workflow's frontier: at most this many same-origin discoveries come
   * back in `discovered`; the rest wait in Postgres (`crawl_urls.spilled`) for `nextSpilledUrls`.
   * Absent: every discovery comes back (runs recorded before the spill).
   */
  frontierRoom?: number;
  /** The last part of the politeness gap, waited just before the request (domain/politeness/request-pacing). */
  pacing?: RequestPacing;
}

/** A rendering of a claimed URL in headless Chromium (task queue gleaner-render). */
export interface RenderAndStoreInput extends FetchAndStoreInput {
  /** Longest wait for the page's network to go quiet after it loaded. @default 5000 */
  settleMs?: number;
}

export interface RenderAndStoreResult extends FetchAndStoreResult {
  /** Visible text in the HTML the server sent and in the rendered DOM, to learn whether rendering paid. */
  rawTextChars?: number;
  renderedTextChars?: number;
  /** Requests of the page refused (robots, SSRF guard, third party, images/fonts/media). */
  requestsRefused?: number;
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
  /** Same-origin discoveries beyond `frontierRoom`, left waiting in Postgres (absent when none). */
  spilled?: number;
  /** Set when the page could not be stored, in words a user understands. */
  error?: string;
  /** Raw Retry-After of a 429/503 answer, for the workflow's backoff timer. */
  retryAfter?: string;
  /** The page asked not to be indexed (meta robots or X-Robots-Tag): stored, not indexed. */
  noindex?: boolean;
  /** Time from the end of the response to the end of this activity (storage), in ms; absent when no request was sent. */
  msSinceResponse?: number;
  /** When the response ended, on this worker process's monotonic clock (for the next request's pacing). */
  responseEnded?: ResponseEnd;
  /** How long the activity waited for the politeness gap before its request (with `pacing`), in ms. */
  pacedMs?: number;
  /** How far past the end of the gap the activity was ready to send (0: it waited), on the clock of the previous response; absent when it cannot tell. */
  lateMs?: number;
  /** With `assessRender`: whether the HTML looks client-rendered, and why. */
  renderAssessment?: { needsRender: boolean; reasons: string[]; visibleTextChars: number };
  /** What this visit found for the stored page (absent for answers that concern no stored page). */
  change?: PageChange;
  /**
   * The stored page needs no processing (unchanged and already processed, a duplicate, or a
   * tombstone): the workflow starts no page workflow for it.
   */
  current?: boolean;
  /** With `current`: the page is searchable as it is. */
  indexed?: boolean;
  /**
   * This visit found the page a copy of another (same body, near-same text, or rel=canonical): never
   * indexed. Set for new or changed content and for a page that became a copy, not for an unchanged
   * page already known as one (it counts as unchanged only).
   */
  duplicate?: boolean;
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

export interface ReleaseOrphanCopiesInput {
  crawlId: string;
}

export interface ReleaseOrphanCopiesResult {
  /** Copies released from their duplicate mark, by origin (sorted), to be indexed. */
  released: Array<{ origin: string; pageIds: number[] }>;
}

export interface RecordPageInput {
  crawlId: string;
  pageId: number;
}

export interface RecordPageResult {
  indexed: boolean;
}

export interface ProcessPageContentInput {
  pageId: number;
}

export interface ProcessPageContentResult {
  /** Chunks the page has now. */
  chunks: number;
  /** Of those, chunks without a vector from the current model: the embed step's work. */
  toEmbed: number;
  /** The extraction was already made from this body (unchanged content hash): nothing was redone. */
  skipped: boolean;
  /** Set when skipped: the page is already marked indexed (its vectors were written before). */
  indexed?: boolean;
  /** The page nearly duplicates a live page (SimHash): it keeps no chunks and is not indexed. */
  duplicate?: boolean;
}

/** A batch of one origin's pages after their fetch (activities/page-batches.ts). */
export interface ProcessPagesContentInput {
  crawlId: string;
  /** The batch's workflow id: it owns the pages it claims. */
  batchId: string;
  /** At most a few dozen page ids (one batch), no repeats. */
  pageIds: number[];
}

/** One page's part of a batch: counts and flags only. */
export type PageContentOutcome = { pageId: number } & (
  | ({ claimed: true } & ProcessPageContentResult)
  /** Claimed by another batch of this crawl (the page was reached through another URL too). */
  | { claimed: false }
  /**
   * The page failed for good (bad input, a thread that ran out of memory, or `extract-timeout`: its
   * analysis ran past the page's deadline): this page only.
   */
  | { claimed: true; error: string }
);

export interface ProcessPagesContentResult {
  pages: PageContentOutcome[];
}

export interface SummarizePagesInput {
  pageIds: number[];
}

export interface SummarizePagesResult {
  /** Pages whose summary failed for good, with why; every other page is summarised (or needed none). */
  errors: Array<{ pageId: number; error: string }>;
}

export type {
  EmbedPageInput,
  EmbedPageResult,
  EmbedPagesInput,
  EmbedPagesResult,
  SummarizePageInput,
  SummarizePageResult,
};

export interface IngestSitemapsInput {
  crawlId: string;
  /** `scheme://host[:port]` of the origin whose sitemaps are read; only its URLs are claimed. */
  origin: string;
  /**
   * Sitemaps to read besides the origin's robots.txt `Sitemap:` lines (which the activity reads
   * from the cached robots record itself) and `<origin>/sitemap.xml` (always tried). @default []
   */
  sitemapUrls?: string[];
  spec: FetchSpec;
  /** Sitemap files fetched at most, indexes included. @default 50 */
  maxSitemaps?: number;
  /** URLs claimed from sitemaps for this origin at most. @default 50_000 */
  maxUrlsPerOrigin?: number;
  /** Gap between two sitemap requests (pass the origin's politeness gap). @default 1000 */
  delayMs?: number;
}

export interface IngestSitemapsResult {
  /** Sitemap files fetched and read (answers other than 2xx are not counted). */
  sitemapsFetched: number;
  /** `<url>` entries read, before scope and filters. */
  urlsSeen: number;
  /** URLs newly claimed by this run (0 when an earlier attempt or run claimed them). */
  urlsClaimed: number;
  /** Sitemap claims of this origin in this crawl, whichever run made them. */
  claimedTotal: number;
  /** True when a limit cut something: entries per file, bytes per file, maxSitemaps, maxUrlsPerOrigin. */
  truncated: boolean;
  /** The first few problems, in words for the user (at most 5). */
  errors: string[];
}

export interface NextClaimedUrlsInput {
  crawlId: string;
  origin: string;
  /** The `lastUrl` of the previous page; absent for the first page. */
  afterUrl?: string;
  /** At most 500. */
  limit: number;
  source: 'sitemap';
}

export interface NextClaimedUrlsResult {
  items: Array<{ url: string; depth: number }>;
  /** Cursor for the next call; absent when this page is empty. */
  lastUrl?: string;
  /** True when this page was the last (fewer than `limit` items). */
  done: boolean;
}

export interface NextSpilledUrlsInput {
  crawlId: string;
  origin: string;
  /** Names this page of the spill (1, 2, …, carried by the workflow): a retry returns the same rows. */
  take: number;
  /** At most 500. */
  limit: number;
}

export interface NextSpilledUrlsResult {
  items: Array<{ url: string; depth: number }>;
}

export interface SpillUrlsInput {
  crawlId: string;
  origin: string;
  /** Claimed URLs of the origin the frontier has no room for (at most 500). */
  urls: string[];
}

export interface SpillUrlsResult {
  /** URLs that are not the origin's claims in this crawl, so could not wait in Postgres (normally none). */
  missing: string[];
}

export interface ClaimKnownPagesInput {
  crawlId: string;
  /** `scheme://host[:port]`: only this origin's stored pages are claimed. */
  origin: string;
  spec: FetchSpec;
}

export interface ClaimKnownPagesResult {
  /** Known pages of the origin claimed for this crawl from the store (any run's claims). */
  claimedTotal: number;
  /** Of those, pages due for a visit now. */
  due: number;
}

export interface NextKnownUrlsInput {
  crawlId: string;
  origin: string;
  /** The `lastUrl` of the previous page; absent for the first page. */
  afterUrl?: string;
  /** At most 500. */
  limit: number;
  /** Leave out known pages that are not due yet. */
  onlyDue: boolean;
}

export interface NextKnownUrlsResult {
  items: Array<{ url: string; depth: number; due: boolean }>;
  /** Cursor for the next call; absent when this page is empty. */
  lastUrl?: string;
  /** True when this page was the last (fewer than `limit` items). */
  done: boolean;
}

/** The soft-404 probe (activities/soft-404-probe.ts): once per origin and crawl. */
export interface ProbeSoft404Input {
  crawlId: string;
  origin: string;
  spec: FetchSpec;
}

export interface ProbeSoft404Result {
  /** The fetch's outcome (`ok`, `http-error`, `blocked`, …) or `robots-blocked` (nothing sent). */
  outcome: string;
  status?: number;
  /** Time since the response ended, for the politeness clock; absent when nothing was sent. */
  msSinceResponse?: number;
}

export interface ActivityApi {
  fetchAndStore(input: FetchAndStoreInput): Promise<FetchAndStoreResult>;
  renderAndStore(input: RenderAndStoreInput): Promise<RenderAndStoreResult>;
  fetchRobots(input: FetchRobotsInput): Promise<FetchRobotsResult>;
  probeSoft404(input: ProbeSoft404Input): Promise<ProbeSoft404Result>;
  registerCrawl(input: RegisterCrawlInput): Promise<RegisterCrawlResult>;
  finishCrawl(input: FinishCrawlInput): Promise<void>;
  /** rel=canonical copies whose canonical page the crawl never made searchable, released (orphan-copies.ts). */
  releaseOrphanCopies(input: ReleaseOrphanCopiesInput): Promise<ReleaseOrphanCopiesResult>;
  recordPage(input: RecordPageInput): Promise<RecordPageResult>;
  processPageContent(input: ProcessPageContentInput): Promise<ProcessPageContentResult>;
  embedPage(input: EmbedPageInput): Promise<EmbedPageResult>;
  /** A page batch's claim, then processPageContent for each page it owns (queue gleaner-page). */
  processPagesContent(input: ProcessPagesContentInput): Promise<ProcessPagesContentResult>;
  /** embedPage for a batch of pages, model calls filled across pages (queue gleaner-embed). */
  embedPages(input: EmbedPagesInput): Promise<EmbedPagesResult>;
  /** summarizePage for each page of a batch (queue gleaner-embed). */
  summarizePages(input: SummarizePagesInput): Promise<SummarizePagesResult>;
  /** Offline summary and tags (embed queue: it needs the embedding model). */
  summarizePage(input: SummarizePageInput): Promise<SummarizePageResult>;
  /** LLM summary pass (queue gleaner-llm). */
  llmSummarizePage(input: LlmPassInput): Promise<LlmPassResult>;
  /** LLM tag pass (queue gleaner-llm). */
  llmTagPage(input: LlmPassInput): Promise<LlmPassResult>;
  ingestSitemaps(input: IngestSitemapsInput): Promise<IngestSitemapsResult>;
  /** Takes the next page of an origin's spilled frontier back from Postgres. */
  nextSpilledUrls(input: NextSpilledUrlsInput): Promise<NextSpilledUrlsResult>;
  /** Parks frontier URLs beyond the bound (arrived by signal) in Postgres. */
  spillUrls(input: SpillUrlsInput): Promise<SpillUrlsResult>;
  nextClaimedUrls(input: NextClaimedUrlsInput): Promise<NextClaimedUrlsResult>;
  claimKnownPages(input: ClaimKnownPagesInput): Promise<ClaimKnownPagesResult>;
  nextKnownUrls(input: NextKnownUrlsInput): Promise<NextKnownUrlsResult>;
  /** Cleans an origin's pages again where its site template changed (queue gleaner-page). */
  recleanSiteTemplate(input: RecleanSiteTemplateInput): Promise<RecleanSiteTemplateResult>;
}
