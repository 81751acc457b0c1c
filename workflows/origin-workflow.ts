/**
 * The per-origin entity: holds one origin's frontier and its politeness clock. Requests to the
 * origin are strictly sequential (one fetch activity in flight) and spaced by a durable timer,
 * so politeness survives any worker crash: the timer lives in Temporal, not in a process.
 */

import {
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  patched,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { FetchSpec } from '../activities/types';
import { backoffMs } from '../domain/backoff';
import { pushTo } from '../domain/collections';
import { type CrawlSpec, parseCrawlSpec } from '../domain/crawl-spec';
import {
  clear,
  emptyFrontier,
  type Frontier,
  pop,
  push,
  pushFirst,
  type ScoreHints,
  scoreUrl,
  size,
  toFrontier,
} from '../domain/frontier';
import {
  type Answer,
  type OriginHealth,
  onForbidden,
  onOutcome,
  onThrottle,
  settled,
} from '../domain/origin-health';
import { countAnswer, countVisit, needsPageWorkflow } from '../domain/origin-stats';
import type { RenderLearning } from '../domain/render-decision';
import {
  handoffMs,
  nextHandoffMs,
  type RequestPacing,
  type ResponseEnd,
  skewedJitterMs,
} from '../domain/request-pacing';
import { crawlWorkflowId } from '../domain/temporal-names';
import {
  dropSpilled,
  emptySpill,
  noteSpilled,
  roomFor,
  type SpillState,
  spillOverflow,
  takeSpilled,
  topUpBounds,
} from './frontier-spill';
import {
  controlSignal,
  discoveredSignal,
  emptyOriginStats,
  enqueueSignal,
  type FrontierItem,
  finishSignal,
  type OriginPhase,
  type OriginProgress,
  type OriginReport,
  type OriginStats,
  originProgressQuery,
  originReportSignal,
  quotaSignal,
} from './messages';
import { fetchAndStore, fetchRobots, ingestSitemaps, nextClaimedUrls } from './origin-activities';
import { pageChildren } from './page-children';
import { claimKnown, type KnownPagesCursor, topUpKnown } from './recrawl';
import { fetchWithTier, type RenderTier } from './render-tier';

/** Sitemap URLs wait in Postgres; the frontier is topped up from there in pages of this size. */
const SITEMAP_PAGE = 200;
const SITEMAP_LOW_WATER = 50;

/** Quota asked of the crawl at a time: fewer round trips, little budget stranded per origin. */
const QUOTA_BLOCK = 25;
/** Cross-origin discoveries are forwarded once this many are pending (or the origin goes idle). */
const RELAY_BATCH = 50;

export interface OriginWorkflowInput {
  spec: CrawlSpec;
  origin: string;
  /** URLs to start with (first batch); later ones arrive by the enqueue signal. */
  initial: FrontierItem[];
  /** Carried across continue-as-new. */
  state?: OriginState;
  /** The crawl was paused when this origin appeared. */
  startPaused?: boolean;
}

/** Counters a denied origin's unfetched URLs can go to. */
type DenialCounter = 'robotsBlocked' | 'droppedByStop' | 'unreachable';

export interface OriginState extends OriginHealth {
  /** A priority heap (plain data); older runs carried a plain array, converted on start. */
  frontier: Frontier | FrontierItem[];
  stats: OriginStats;
  quota: number;
  receivedBatches: number;
  budgetExhausted: boolean;
  pendingRelay: Record<string, FrontierItem[]>;
  robotsChecked?: boolean;
  /** Crawl-delay from robots.txt; the gap is the larger of it and `delayMs`. */
  crawlDelayMs?: number;
  /** Why this origin is not crawled at all (robots.txt unreachable, Crawl-delay too long). */
  deniedReason?: string;
  /** The counter URLs sent to a denied origin go to (robotsBlocked when unset, as before). */
  deniedAs?: DenialCounter;
  /** Where the frontier stands in this origin's sitemap URLs (kept in Postgres, pulled in pages). */
  sitemaps?: { cursor?: string; done: boolean };
  /** Where the frontier stands in this origin's known pages (a recrawl), kept in Postgres. */
  known?: KnownPagesCursor;
  /** Paused by an operator (control signal): no request until resumed. */
  paused?: boolean;
  cancelled?: boolean;
  /** Which tier each kind of page of this origin needs (render 'auto'). */
  renderLearning?: RenderLearning;
  /** The frontier is bounded and what did not fit waits in Postgres (absent in older runs). */
  spill?: SpillState;
  /**
   * The end of the origin's last response, as the fetch activity that received it reported it;
   * unset when the last request to the origin was anything else (robots.txt, a sitemap, a render).
   */
  lastResponse?: ResponseEnd;
  /** The part of the gap left to the fetch activity, learnt from how long the last one waited. */
  handoffMs?: number;
  /** Page batches started so far: the next batch's sequence number (`patched('page-batches-v1')`). */
  pageBatches?: number;
}

export interface OriginResult {
  origin: string;
  stats: OriginStats;
}

export async function originWorkflow(input: OriginWorkflowInput): Promise<OriginResult> {
  const { origin } = input;
  // Origins started by an older crawl workflow carry a spec without the newer fields: fill the
  // defaults here, or a missing field would silently change behaviour (and break replay).
  const spec = parseCrawlSpec(input.spec, input.spec.crawlId);
  const state: OriginState = input.state ?? {
    frontier: emptyFrontier(),
    stats: emptyOriginStats(),
    quota: 0,
    receivedBatches: 0,
    budgetExhausted: false,
    pendingRelay: {},
    ...(input.startPaused ? { paused: true } : {}),
  };
  const frontier = toFrontier(state.frontier);
  state.frontier = frontier;
  // Runs that began before priority ordering keep plain discovery order (replay-safe).
  const prioritised = patched('frontier-priority-v1');
  const enqueue = (item: FrontierItem, hints: ScoreHints = {}) =>
    push(frontier, item, prioritised ? scoreUrl(item, hints) : 0);
  if (!input.state) for (const item of input.initial) enqueue(item);
  const crawl = getExternalWorkflowHandle(crawlWorkflowId(spec.crawlId));
  // Runs recorded before batches start one page workflow per page (replay-safe).
  const batched = patched('page-batches-v1');
  if (batched) state.pageBatches ??= 0;
  const pages = pageChildren({ spec, origin, state, batched });
  // Fetches in flight beside the loop: only when the origin may take more than one at a time.
  // With one at a time the loop awaits each fetch itself, as runs recorded before this did.
  const inFlight = new Set<Promise<void>>();
  let inFlightFailure: unknown;
  let lastStartAtMs: number | undefined;
  let phase: OriginPhase = 'fetching';
  let finishRequested = false;
  let quotaPending = false;
  let lastReportedIdle = false;
  // Runs recorded before this wait the whole gap on the durable timer and draw a uniform jitter.
  const pacedInActivity = patched('pacing-in-activity-v1');
  // Runs recorded before the rendering tier fetch every page plainly (replay-safe).
  let renderTier: RenderTier | undefined;
  if (patched('render-tier-v1')) {
    state.renderLearning ??= {};
    renderTier = {
      mode: spec.render,
      learning: state.renderLearning,
      requestEnded(msSinceResponse = 0) {
        state.stats.lastFetchAtMs = Date.now() - Math.min(msSinceResponse, 60_000);
        state.lastResponse = undefined;
      },
      async waitGap() {
        const gapMs = Math.max(spec.delayMs, state.crawlDelayMs ?? 0);
        const waitMs = gapMs - (Date.now() - (state.stats.lastFetchAtMs ?? Number.NEGATIVE_INFINITY));
        if (waitMs > 0) await sleep(waitMs);
      },
    };
  }

  // Runs recorded before the spill keep every discovery in the frontier (replay-safe).
  if (patched('frontier-spill-v1')) state.spill ??= emptySpill();
  /** Room promised to fetches in flight, so concurrent fetches cannot overfill the frontier together. */
  let reservedRoom = 0;
  const topUp = () => (state.spill ? topUpBounds(spec.frontierMaxUrls, size(frontier)) : undefined);

  setHandler(enqueueSignal, (batch) => {
    state.receivedBatches = Math.max(state.receivedBatches, batch.seq);
    if (state.deniedReason) {
      if (state.cancelled) state.stats.droppedByStop = (state.stats.droppedByStop ?? 0) + batch.items.length;
      else {
        const counter = state.deniedAs ?? 'robotsBlocked';
        state.stats[counter] = (state.stats[counter] ?? 0) + batch.items.length;
      }
      return;
    }
    if (state.budgetExhausted) {
      state.stats.droppedByBudget += batch.items.length;
      return;
    }
    for (const item of batch.items) enqueue(item);
  });
  setHandler(quotaSignal, (grant) => {
    quotaPending = false;
    state.quota += grant.granted;
    if (grant.exhausted) {
      state.budgetExhausted = true;
      state.stats.droppedByBudget += clear(frontier) + dropSpilled(state.spill);
    }
  });
  setHandler(controlSignal, (command) => {
    if (command.action === 'pause') state.paused = true;
    if (command.action === 'resume') state.paused = false;
    if (command.action === 'cancel' && !state.cancelled) {
      state.cancelled = true;
      state.paused = false;
      state.deniedReason = `cancelled${command.reason ? `: ${command.reason}` : ' by an operator'}`;
      state.stats.droppedByStop =
        (state.stats.droppedByStop ?? 0) + clear(frontier) + dropSpilled(state.spill);
    }
  });
  setHandler(finishSignal, () => {
    finishRequested = true;
  });
  setHandler(originProgressQuery, (): OriginProgress => progress());

  function progress(): OriginProgress {
    const { firstFetchAtMs, lastFetchAtMs, fetched } = state.stats;
    const spanMs =
      firstFetchAtMs !== undefined && lastFetchAtMs !== undefined ? lastFetchAtMs - firstFetchAtMs : 0;
    return {
      origin,
      workflowId: workflowInfo().workflowId,
      phase,
      queued: size(frontier) + (state.spill?.waiting ?? 0),
      stats: state.stats,
      ratePerSecond: spanMs > 0 ? ((fetched - 1) * 1000) / spanMs : 0,
    };
  }

  function showDetails(): void {
    const p = progress();
    setCurrentDetails(
      `**${origin}** — ${p.phase}\n\nfetched ${p.stats.fetched}, queued ${p.queued}, errors ${p.stats.errors}, ` +
        `links ${p.stats.links}, ${p.ratePerSecond.toFixed(2)} pages/s`,
    );
  }

  async function report(extra: Partial<OriginReport>): Promise<void> {
    await crawl.signal(originReportSignal, {
      origin,
      receivedBatches: state.receivedBatches,
      idle: false,
      done: false,
      stats: state.stats,
      returnedQuota: 0,
      quotaWanted: 0,
      ...extra,
    });
  }

  async function flushRelay(): Promise<void> {
    if (Object.keys(state.pendingRelay).length === 0) return;
    const byOrigin = state.pendingRelay;
    state.pendingRelay = {};
    await crawl.signal(discoveredSignal, { byOrigin });
  }

  /** `timedHandoffMs`: the hand-off of a lap whose timer ran, to learn the next one from. */
  async function fetchNext(
    item: FrontierItem,
    pacing?: RequestPacing,
    timedHandoffMs?: number,
  ): Promise<void> {
    phase = 'fetching';
    showDetails();
    const now = Date.now();
    state.stats.firstFetchAtMs ??= now;
    let result: Awaited<ReturnType<typeof fetchWithTier>>;
    const room = state.spill ? roomFor(spec.frontierMaxUrls, size(frontier), reservedRoom) : undefined;
    reservedRoom += room ?? 0;
    try {
      const input = {
        crawlId: spec.crawlId,
        url: item.url,
        depth: item.depth,
        spec: fetchSpec(),
        ...(room === undefined ? {} : { frontierRoom: room }),
        ...(pacing ? { pacing } : {}),
      };
      result = renderTier ? await fetchWithTier(input, renderTier) : await fetchAndStore(input);
    } catch (error) {
      // Retries are spent: the page is lost for this crawl, the origin goes on.
      const cause = (error as Error).cause;
      state.stats.errors++;
      state.stats.lastError = `${item.url}: ${cause instanceof Error ? cause.message : (error as Error).message}`;
      state.stats.lastFetchAtMs = Date.now();
      state.lastResponse = undefined;
      return;
    } finally {
      reservedRoom -= room ?? 0;
    }
    if (result.outcome === 'robots-blocked') {
      // The page budget is untouched. No request was sent, unless the URL answered with a redirect
      // into a disallowed path: then that response dates the politeness clock like any other.
      state.stats.robotsBlocked++;
      state.quota++;
      if (result.msSinceResponse !== undefined) {
        state.stats.lastFetchAtMs = Date.now() - Math.min(result.msSinceResponse, 60_000);
        state.lastResponse = result.responseEnded;
      }
      return;
    }
    // The gap runs from the response's end: workflow time minus the activity's own storage time
    // is never earlier than that end, and skips waiting out work that sent nothing to the origin.
    state.stats.lastFetchAtMs = Date.now() - Math.min(result.msSinceResponse ?? 0, 60_000);
    state.lastResponse = result.responseEnded;
    if (timedHandoffMs !== undefined && result.pacedMs !== undefined) {
      state.handoffMs = nextHandoffMs(timedHandoffMs, result.pacedMs);
    }
    state.stats.bytes += result.bytes;
    state.stats.links += result.linksStored;
    if (throttled(item, result)) return;
    settled(state, item.url);
    countAnswer(state.stats, item.url, result);
    trackForbidden(result);
    trackFailureRate(result);
    for (const found of result.discovered) {
      if (found.origin === origin) {
        if (!state.budgetExhausted) enqueue({ url: found.url, depth: found.depth });
      } else {
        pushTo(state.pendingRelay, found.origin, { url: found.url, depth: found.depth });
      }
    }
    if (state.spill && result.spilled) {
      noteSpilled(state.spill, result.spilled);
      state.stats.spilled = (state.stats.spilled ?? 0) + result.spilled;
    }
    countVisit(state.stats, result);
    if (result.noindex) state.stats.noindex = (state.stats.noindex ?? 0) + 1;
    else if (needsPageWorkflow(result) && result.pageId !== undefined) pages.add(result.pageId);
  }

  /** 429/5xx: the URL goes back first in line and the origin pauses (durable timer). */
  function throttled(item: FrontierItem, answer: Answer): boolean {
    const decision = onThrottle(state, spec, item.url, answer, Date.now());
    if (!decision.retry) return false;
    state.stats.throttled = (state.stats.throttled ?? 0) + 1;
    state.stats.lastError = `${item.url}: HTTP ${answer.status}; origin paused ${Math.round(decision.waitMs / 1000)} s`;
    pushFirst(frontier, item);
    state.quota++;
    return true;
  }

  function trackFailureRate(answer: Answer): void {
    const decision = onOutcome(state, spec, answer, Date.now());
    if (decision.kind === 'closed') return;
    state.stats.circuitOpens = (state.stats.circuitOpens ?? 0) + 1;
    if (decision.kind === 'stop') deny(decision.message, 'droppedByStop');
    else state.stats.lastError = `${origin}: ${decision.message}`;
  }

  function trackForbidden(answer: Answer): void {
    const stopReason = onForbidden(state, spec, answer);
    if (stopReason) deny(stopReason, 'droppedByStop');
  }

  /** Reads robots.txt once per origin (cached by the activity for 24 h) before any page. */
  async function checkRobots(): Promise<void> {
    phase = 'robots';
    showDetails();
    const ask = () =>
      fetchRobots({ crawlId: spec.crawlId, origin, userAgent: spec.userAgent, allowHosts: spec.allowHosts });
    let robots = await ask();
    // A robots.txt answering 5xx/429 disallows everything for now; ask again after backoff.
    for (let retry = 1; retry <= spec.maxRetries && isServerTrouble(robots); retry++) {
      state.stats.throttled = (state.stats.throttled ?? 0) + 1;
      await sleep(backoffMs(retry, spec.backoffBaseMs, spec.backoffMaxMs));
      robots = await ask();
    }
    state.robotsChecked = true;
    // robots.txt was (or may have been) a request to the origin: the gap runs from here too.
    state.stats.lastFetchAtMs = Date.now();
    state.lastResponse = undefined;
    if (robots.source === 'unreachable-disallow-all') {
      // An origin that cannot be reached has not disallowed anything: its URLs count as unreachable.
      deny(
        `${robots.error ?? 'robots.txt unreachable'}; origin not crawled`,
        patched('deny-unreachable-v1') ? 'unreachable' : 'robotsBlocked',
      );
    } else if (robots.crawlDelayMs !== undefined && robots.crawlDelayMs > spec.maxCrawlDelayMs) {
      deny(
        `robots.txt asks for Crawl-delay ${robots.crawlDelayMs / 1000} s (limit ${spec.maxCrawlDelayMs / 1000} s); origin skipped`,
      );
    } else if (robots.crawlDelayMs !== undefined) {
      state.crawlDelayMs = robots.crawlDelayMs;
    }
  }

  /**
   * Claims the origin's sitemap URLs into Postgres (the activity returns counts only, never
   * URLs, so history stays small); the loop then pulls them in pages. A failure means "no sitemap".
   */
  async function readSitemaps(): Promise<void> {
    const gapMs = Math.max(spec.delayMs, state.crawlDelayMs ?? 0);
    const waitMs = gapMs - (Date.now() - (state.stats.lastFetchAtMs ?? Number.NEGATIVE_INFINITY));
    if (waitMs > 0) await sleep(waitMs);
    try {
      const result = await ingestSitemaps({
        crawlId: spec.crawlId,
        origin,
        spec: fetchSpec(),
        delayMs: gapMs,
        maxUrlsPerOrigin: Math.min(50_000, spec.maxPages),
      });
      state.sitemaps = { done: result.claimedTotal === 0 };
      if (result.errors[0]) state.stats.lastError = `${origin} sitemap: ${result.errors[0]}`;
    } catch (error) {
      state.sitemaps = { done: true };
      state.stats.lastError = `${origin} sitemap: ${(error as Error).message}`;
    }
    state.stats.lastFetchAtMs = Date.now();
    state.lastResponse = undefined;
  }

  async function topUpFromSitemaps(
    sitemaps: { cursor?: string; done: boolean },
    limit: number,
  ): Promise<void> {
    const page = await nextClaimedUrls({
      crawlId: spec.crawlId,
      origin,
      ...(sitemaps.cursor ? { afterUrl: sitemaps.cursor } : {}),
      limit,
      source: 'sitemap',
    });
    for (const item of page.items) enqueue(item, { fromSitemap: true });
    sitemaps.cursor = page.lastUrl ?? sitemaps.cursor;
    sitemaps.done = page.done;
  }

  function fetchSpec(): FetchSpec {
    return {
      scope: spec.scope,
      seeds: spec.seeds,
      domains: spec.domains,
      includePrefixes: spec.includePrefixes,
      exclude: spec.exclude,
      maxDepth: spec.maxDepth,
      userAgent: spec.userAgent,
      allowHosts: spec.allowHosts,
      maxBodyBytes: spec.maxBodyBytes,
      maxRedirects: spec.maxRedirects,
      bodyTimeoutMs: spec.bodyTimeoutMs,
      delayMs: spec.delayMs,
    };
  }

  /** Stops the origin for good; what it still had queued is counted as robots-blocked or stopped. */
  function deny(reason: string, dropped: DenialCounter = 'robotsBlocked'): void {
    state.deniedReason = reason;
    if (dropped === 'unreachable') state.deniedAs = dropped;
    state.stats.errors++;
    state.stats.lastError = `${origin}: ${reason}`;
    state.stats[dropped] = (state.stats[dropped] ?? 0) + clear(frontier) + dropSpilled(state.spill);
  }

  /**
   * Seed 003: per-host concurrency stays 1 unless the crawl delay permits. A robots.txt
   * Crawl-delay asks for spaced, sequential requests, so it always means one at a time.
   */
  const concurrency = () => (state.crawlDelayMs === undefined ? spec.perOriginConcurrency : 1);

  function startFetch(item: FrontierItem): void {
    lastStartAtMs = Date.now();
    const running: Promise<void> = fetchNext(item)
      .catch((error: unknown) => {
        inFlightFailure ??= error;
      })
      .finally(() => inFlight.delete(running));
    inFlight.add(running);
  }

  /** Waits out every fetch in flight; a bug in one surfaces here rather than going unnoticed. */
  async function settleFetches(): Promise<void> {
    if (inFlight.size > 0) await condition(() => inFlight.size === 0);
    if (inFlightFailure !== undefined) throw inFlightFailure;
  }

  const relayPending = () => Object.values(state.pendingRelay).reduce((n, items) => n + items.length, 0);

  // Histories recorded before robots support replay without this step.
  if (!state.robotsChecked && patched('robots-v1')) await checkRobots();
  if (!state.deniedReason && state.sitemaps === undefined && spec.sitemaps && patched('sitemaps-v1')) {
    await readSitemaps();
  }
  // A recrawl: every known page of the origin in scope is claimed before the first page is fetched.
  if (!state.deniedReason && state.known === undefined && patched('recrawl-v1')) {
    state.known = await claimKnown(spec, origin, fetchSpec());
  }

  while (!finishRequested) {
    pages.closeBatchIfDue();
    if (relayPending() >= RELAY_BATCH) await flushRelay();
    if (state.known && !state.budgetExhausted && !state.deniedReason) {
      await topUpKnown(
        spec,
        origin,
        state.known,
        size(frontier),
        (item, priority) => push(frontier, item, priority),
        topUp(),
      );
    }
    if (state.sitemaps && !state.sitemaps.done && !state.budgetExhausted && !state.deniedReason) {
      const bounds = topUp();
      if (size(frontier) < (bounds?.lowWater ?? SITEMAP_LOW_WATER)) {
        await topUpFromSitemaps(state.sitemaps, bounds?.page ?? SITEMAP_PAGE);
      }
    }
    if (state.spill && size(frontier) > spec.frontierMaxUrls) {
      await spillOverflow(spec, origin, state.spill, frontier, (item) => enqueue(item));
    }
    if (state.spill && !state.budgetExhausted && !state.deniedReason) {
      await takeSpilled(spec, origin, state.spill, size(frontier), (item) => enqueue(item));
    }

    if (size(frontier) === 0) {
      if (inFlight.size > 0) {
        // A fetch still running may bring links: the origin is not idle before it ends.
        pages.closeBatch();
        await condition(() => inFlight.size === 0 || size(frontier) > 0);
        continue;
      }
      await flushRelay();
      await pages.drain();
      if (size(frontier) === 0 && !lastReportedIdle) {
        phase = 'idle';
        showDetails();
        const returnedQuota = state.quota;
        state.quota = 0;
        lastReportedIdle = true;
        await report({ idle: true, returnedQuota });
      }
      await condition(() => size(frontier) > 0 || finishRequested);
      lastReportedIdle = false;
      continue;
    }

    if (state.quota === 0) {
      if (!quotaPending) {
        quotaPending = true;
        pages.closeBatch();
        phase = 'waiting-quota';
        showDetails();
        await report({ quotaWanted: Math.min(QUOTA_BLOCK, size(frontier)) });
      }
      await condition(() => !quotaPending || finishRequested);
      continue;
    }

    // The gap runs from the end of the previous fetch (workflow time is never earlier than
    // the activity's real completion), so the server sees at least delayMs of silence.
    if (state.paused) {
      pages.closeBatch();
      phase = 'paused';
      showDetails();
      await condition(() => !state.paused || finishRequested);
      continue;
    }
    const baseGapMs = Math.max(spec.delayMs, state.crawlDelayMs ?? 0);
    // Workflow Math.random is seeded by Temporal, so the jitter replays identically.
    const gapMs =
      baseGapMs +
      (pacedInActivity
        ? skewedJitterMs(baseGapMs, spec.jitterRatio, Math.random())
        : Math.floor(Math.random() * baseGapMs * spec.jitterRatio));
    // With fetches in flight the gap runs from the later of the last start and the last response.
    const lastRequestAtMs = Math.max(
      state.stats.lastFetchAtMs ?? Number.NEGATIVE_INFINITY,
      lastStartAtMs ?? Number.NEGATIVE_INFINITY,
    );
    // One request at a time: the fetch activity waits the gap's last stretch itself, exactly, so
    // the overhead of the timer's and the fetch's scheduling is not added to every lap.
    const sequential = concurrency() === 1 && inFlight.size === 0;
    const leftToActivityMs = pacedInActivity && sequential ? handoffMs(gapMs, state.handoffMs) : 0;
    const waitMs = Math.max(
      gapMs - leftToActivityMs - (Date.now() - lastRequestAtMs),
      (state.pausedUntilMs ?? 0) - Date.now(),
    );
    if (waitMs > 0) {
      // A batch is never held past its age by the politeness clock (a Crawl-delay may be long).
      pages.closeBatchIfDue(Date.now() + waitMs);
      phase = 'sleeping';
      showDetails();
      await sleep(waitMs);
    }
    const item = pop(frontier);
    if (!item) continue;
    state.quota--;
    if (concurrency() > 1) {
      startFetch(item);
      pages.closeBatchIfDue();
      await condition(() => inFlight.size < concurrency() || finishRequested);
    } else {
      // What the timer left of the gap, measured again now that the timer has fired.
      const owedMs = Math.min(leftToActivityMs, gapMs - (Date.now() - lastRequestAtMs));
      // A lap whose timer ran tells how much of the hand-off the scheduling around it used.
      const timed = waitMs > 0 && leftToActivityMs > 0;
      if (timed && owedMs <= 0) state.handoffMs = nextHandoffMs(leftToActivityMs, 0);
      await fetchNext(
        item,
        owedMs > 0
          ? { gapMs, handoffMs: owedMs, ...(state.lastResponse ? { previous: state.lastResponse } : {}) }
          : undefined,
        timed && owedMs > 0 ? leftToActivityMs : undefined,
      );
    }

    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > spec.continueAsNewAfterEvents) {
      await settleFetches();
      await flushRelay();
      await pages.drain();
      // Handlers only mutate state synchronously, so nothing is lost between here and the new run.
      await condition(() => !quotaPending || finishRequested);
      if (!finishRequested) {
        // The next run starts with the bounded frontier only; a batch that arrives meanwhile is parked too.
        while (state.spill && size(frontier) > spec.frontierMaxUrls) {
          if ((await spillOverflow(spec, origin, state.spill, frontier, (item) => enqueue(item))) === 0)
            break;
        }
        await continueAsNew<typeof originWorkflow>({ spec, origin, initial: [], state });
      }
    }
  }

  await settleFetches();
  await flushRelay();
  await pages.drain();
  phase = 'done';
  showDetails();
  await report({ idle: true, done: true, returnedQuota: state.quota });
  log.info('origin drained', { origin, fetched: state.stats.fetched, errors: state.stats.errors });
  return { origin, stats: state.stats };
}

function isServerTrouble(robots: { source: string; httpStatus?: number }): boolean {
  const status = robots.httpStatus ?? 0;
  return robots.source === 'unreachable-disallow-all' && (status >= 500 || status === 429);
}
