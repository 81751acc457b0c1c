/**
 * The per-origin entity: holds one origin's frontier and its politeness clock. Requests to the
 * origin are strictly sequential (one fetch activity in flight) and spaced by a durable timer,
 * so politeness survives any worker crash: the timer lives in Temporal, not in a process.
 *
 * This file is the loop and its signals; each concern lives beside it: the fetch and what its
 * answer does (`origin-fetch.ts`), page children (`page-children.ts`), robots.txt
 * (`origin-robots.ts`), sitemaps (`sitemaps.ts`), known pages (`recrawl.ts`), the frontier spill
 * (`frontier-spill.ts`), the rendering tier (`render-tier.ts`); the pure rules are in `domain/`
 * (`origin-state.ts`, `origin-stats.ts`, `domain/politeness/`, …).
 */

import {
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { type CrawlSpec, parseCrawlSpec } from '../domain/crawl-spec';
import {
  type FrontierItem,
  pop,
  push,
  type ScoreHints,
  scoreUrl,
  size,
  toFrontier,
} from '../domain/frontier';
import { emptySpill, topUpBounds } from '../domain/frontier-spill';
import {
  compactsWhileIdle,
  deny,
  newOriginState,
  type OriginState,
  QUOTA_BLOCK,
  quotaWantedAhead,
  receiveBatch,
  receiveControl,
  receiveQuota,
  recleansWhileIdle,
  relayPending,
} from '../domain/origin-state';
import { fetchRatePerSecond } from '../domain/origin-stats';
import { PAGE_BATCH_MS, PAGE_BATCH_MS_BEFORE_V2, PAGE_BATCH_OPENING_PAGES } from '../domain/page-batch';
import { crawlWorkflowId } from '../domain/temporal-names';
import { spillOverflow, takeSpilled } from './frontier-spill';
import {
  controlSignal,
  discoveredSignal,
  enqueueSignal,
  finishSignal,
  type OriginPhase,
  type OriginProgress,
  type OriginReport,
  type OriginStats,
  originProgressQuery,
  originReportSignal,
  quotaSignal,
} from './messages';
import { fetchSpecOf, originFetcher } from './origin-fetch';
import { originPatches } from './origin-generations';
import { checkRobots } from './origin-robots';
import type { OriginRun } from './origin-run';
import { pageChildren } from './page-children';
import { politenessLap } from './politeness-lap';
import { claimKnown, topUpKnown } from './recrawl';
import { originRenderTier } from './render-tier';
import { recleanOrigin } from './site-templates';
import { readSitemaps, SITEMAP_LOW_WATER, SITEMAP_PAGE, topUpFromSitemaps } from './sitemaps';
import { runSoft404Probe } from './soft-404-probe';

export type { OriginState } from '../domain/origin-state';

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
  /** Page quota granted with the start (crawls started before this field ask for their first block). */
  initialQuota?: number;
  /** The crawl's first origin: its first page batch is small (PAGE_BATCH_OPENING_PAGES). */
  opening?: boolean;
  /**
   * Wait this long before the first request (`crawl-start-stagger-v1`: origins started together
   * begin spread over the crawl's gap). Runs started without it begin at once.
   */
  startAfterMs?: number;
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
  const state: OriginState = input.state ?? newOriginState(input.startPaused, input.initialQuota);
  // First of this run's patch questions: one marker answers them all in runs begun since it came.
  const patched = originPatches();
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
  const pages = pageChildren({
    spec,
    origin,
    state,
    batched,
    ...(input.opening ? { openingBatchPages: PAGE_BATCH_OPENING_PAGES } : {}),
    // Runs recorded before this close a batch 2 s after its first page (replay-safe).
    batchAgeMs: patched('page-batch-age-v2') ? PAGE_BATCH_MS : PAGE_BATCH_MS_BEFORE_V2,
  });
  let phase: OriginPhase = 'fetching';
  let finishRequested = false;
  let quotaPending = false;
  // A run an idle origin continued into has already reported the idle (below).
  let lastReportedIdle = input.state?.idleReported === true;
  if (input.state) delete state.idleReported;
  const run: OriginRun = {
    spec,
    origin,
    state,
    frontier,
    // Runs recorded before these learn the hand-off from the last lap alone, and time short gaps too
    // (replay-safe).
    lap: politenessLap(spec, state, {
      smoothedHandoff: patched('handoff-overhead-v1'),
      wholeShortGaps: patched('short-gap-handoff-v1'),
    }),
    enqueue,
    show(next) {
      phase = next;
      showDetails();
    },
    deny: (reason, dropped) => deny(state, frontier, origin, reason, dropped),
    patched,
  };
  // Runs recorded before this wait the whole gap on the durable timer and draw a uniform jitter.
  const pacedInActivity = patched('pacing-in-activity-v1');
  // Runs recorded before this ask for quota only once they have none left (replay-safe).
  const quotaAhead = patched('quota-prefetch-v1');
  /** The crawl answered an ask ahead with nothing (its budget is spent): the next ask is at 0. */
  let askedAheadInVain = false;
  // Runs recorded before the rendering tier fetch every page plainly (replay-safe).
  const renderTier = patched('render-tier-v1') ? originRenderTier(run) : undefined;
  const fetcher = originFetcher(run, pages, renderTier);

  // Runs recorded before the spill keep every discovery in the frontier (replay-safe).
  if (patched('frontier-spill-v1')) state.spill ??= emptySpill();
  const topUp = () => (state.spill ? topUpBounds(spec.frontierMaxUrls, size(frontier)) : undefined);

  // Runs recorded before this report idle again only once a batch has brought them pages: a run
  // continued as new while idle and handed a batch before its first task left the crawl waiting for
  // that origin for ever, and so would a batch that brings nothing to fetch (replay-safe).
  const idleAfterEveryBatch = patched('idle-after-every-batch-v1');
  setHandler(enqueueSignal, (batch) => {
    for (const item of receiveBatch(state, batch)) enqueue(item);
    // The crawl counts the origin busy from the moment it sent a batch, whatever the batch held.
    if (idleAfterEveryBatch) lastReportedIdle = false;
  });
  setHandler(quotaSignal, (grant) => {
    quotaPending = false;
    if (grant.granted === 0 && !grant.exhausted) askedAheadInVain = true;
    receiveQuota(state, frontier, grant);
  });
  setHandler(controlSignal, (command) => receiveControl(state, frontier, command));
  setHandler(finishSignal, () => {
    finishRequested = true;
  });
  setHandler(originProgressQuery, (): OriginProgress => progress());

  function progress(): OriginProgress {
    return {
      origin,
      workflowId: workflowInfo().workflowId,
      phase,
      queued: size(frontier) + (state.spill?.waiting ?? 0),
      stats: state.stats,
      ratePerSecond: fetchRatePerSecond(state.stats),
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

  async function reclean(): Promise<void> {
    const fetched = state.stats.fetched;
    const recleaned = await recleanOrigin(origin, spec.llmSummaries === true);
    state.stats.chunksEmbedded = (state.stats.chunksEmbedded ?? 0) + recleaned.chunksEmbedded;
    state.recleanedAtFetched = fetched;
  }

  /**
   * The idle re-clean (`idle-reclean-v1`) runs beside the loop: awaited inside it, an origin woken
   * by a late link waited for the page queue (busy with other origins' pages) before it fetched
   * again, and the hostile lab's healthy origin saw gaps of 4-5 s instead of ~1 s. It is awaited
   * only where the origin's state must be whole: before a continue-as-new and before the finish.
   */
  let idleReclean: Promise<void> | undefined;
  function startIdleReclean(): void {
    idleReclean = reclean().finally(() => {
      idleReclean = undefined;
    });
  }

  async function flushRelay(): Promise<void> {
    if (Object.keys(state.pendingRelay).length === 0) return;
    const byOrigin = state.pendingRelay;
    state.pendingRelay = {};
    await crawl.signal(discoveredSignal, { byOrigin });
  }

  /**
   * Seed 003: per-host concurrency stays 1 unless the crawl delay permits. A robots.txt
   * Crawl-delay asks for spaced, sequential requests, so it always means one at a time.
   */
  const concurrency = () => (state.crawlDelayMs === undefined ? spec.perOriginConcurrency : 1);

  // Only a run started with it waits (the field is its input), so older histories replay unchanged.
  if (!input.state && input.startAfterMs && input.startAfterMs > 0) await sleep(input.startAfterMs);
  // Histories recorded before robots support replay without this step.
  if (!state.robotsChecked && patched('robots-v1')) await checkRobots(run);
  if (!state.deniedReason && state.sitemaps === undefined && spec.sitemaps && patched('sitemaps-v1')) {
    await readSitemaps(run);
  }
  // The soft-404 probe, once per origin and crawl, when the crawl asks for it (issue 27 item 3).
  if (!state.deniedReason && !state.soft404Probed && spec.soft404Probe && patched('soft-404-probe-v1'))
    await runSoft404Probe(run);
  // A recrawl: every known page of the origin in scope is claimed before the first page is fetched.
  if (!state.deniedReason && state.known === undefined && patched('recrawl-v1')) {
    state.known = await claimKnown(spec, origin, fetchSpecOf(spec));
  }

  while (!finishRequested) {
    pages.closeBatchIfDue();
    if (relayPending(state) >= RELAY_BATCH) await flushRelay();
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
        await topUpFromSitemaps(run, state.sitemaps, bounds?.page ?? SITEMAP_PAGE);
      }
    }
    if (state.spill && size(frontier) > spec.frontierMaxUrls) {
      await spillOverflow(spec, origin, state.spill, frontier, (item) => enqueue(item));
    }
    if (state.spill && !state.budgetExhausted && !state.deniedReason) {
      await takeSpilled(spec, origin, state.spill, size(frontier), (item) => enqueue(item));
    }

    if (size(frontier) === 0) {
      if (fetcher.inFlight > 0) {
        // A fetch still running may bring links: the origin is not idle before it ends.
        pages.closeBatch();
        await condition(() => fetcher.inFlight === 0 || size(frontier) > 0);
        continue;
      }
      await flushRelay();
      await pages.drain();
      // A block asked for ahead is taken first, so the quota handed back with the idle report is
      // all the origin holds (a grant arriving after it would sit here, unused, until the finish).
      if (quotaPending) await condition(() => !quotaPending || finishRequested);
      if (size(frontier) === 0 && !lastReportedIdle) {
        phase = 'idle';
        showDetails();
        const returnedQuota = state.quota;
        state.quota = 0;
        lastReportedIdle = true;
        await report({ idle: true, returnedQuota });
      }
      const woken = () => size(frontier) > 0 || finishRequested || (idleAfterEveryBatch && !lastReportedIdle);
      if (!idleReclean && recleansWhileIdle(state, finishRequested) && patched('idle-reclean-v1'))
        startIdleReclean();
      if (idleReclean) {
        // Woken, the origin fetches at once; if it is still idle when the re-clean ends, this branch
        // runs again (another re-clean if pages came meanwhile, then the continue-as-new below).
        await condition(() => woken() || idleReclean === undefined);
      } else {
        if (
          compactsWhileIdle(workflowInfo().historyLength, finishRequested) &&
          patched('idle-compaction-v1')
        ) {
          // Handlers only mutate state synchronously, so nothing is lost between here and the new run.
          state.idleReported = lastReportedIdle;
          await continueAsNew<typeof originWorkflow>({ spec, origin, initial: [], state });
        }
        await condition(woken);
      }
      if (woken()) lastReportedIdle = false;
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

    if (state.paused) {
      pages.closeBatch();
      phase = 'paused';
      showDetails();
      await condition(() => !state.paused || finishRequested);
      continue;
    }
    // The next block is asked for while a few pages are left, so the grant comes before they run
    // out; the loop does not wait for the signal to be delivered (a lap is not spent on it).
    if (quotaAhead && !quotaPending && !askedAheadInVain) {
      const wanted = quotaWantedAhead(state, size(frontier));
      if (wanted > 0) {
        quotaPending = true;
        report({ quotaWanted: wanted, quotaLeft: state.quota }).catch((error: unknown) => {
          // Undelivered: the origin asks again once it has no quota left, as it always did.
          log.warn('could not ask the crawl for quota ahead', { origin, error: String(error) });
          quotaPending = false;
        });
      }
    }
    // One request at a time: the fetch activity waits the gap's last stretch itself, exactly, so
    // the overhead of the timer's and the fetch's scheduling is not added to every lap.
    const lap = run.lap.plan({
      pacedInActivity,
      sequential: concurrency() === 1 && fetcher.inFlight === 0,
      lastStartAtMs: fetcher.lastStartAtMs,
    });
    const timer = run.lap.timer(lap, (firesAtMs) => {
      // A batch is never held past its age by the politeness clock (a Crawl-delay may be long).
      pages.closeBatchIfDue(firesAtMs);
      phase = 'sleeping';
      showDetails();
    });
    if (timer) await timer;
    const item = pop(frontier);
    if (!item) continue;
    state.quota--;
    if (concurrency() > 1) {
      fetcher.start(item);
      pages.closeBatchIfDue();
      await condition(() => fetcher.inFlight < concurrency() || finishRequested);
    } else {
      const { pacing, timedHandoffMs } = run.lap.handOff(lap);
      await fetcher.fetchNext(item, pacing, timedHandoffMs);
    }

    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > spec.continueAsNewAfterEvents) {
      await fetcher.settle();
      if (idleReclean) await idleReclean;
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

  await fetcher.settle();
  await flushRelay();
  await pages.drain();
  if (idleReclean) await idleReclean;
  // Pages processed before the origin's site template was learnt are cleaned again (runs recorded
  // before templates end without this step), unless that ran while idle and no page came since.
  if (patched('site-templates-v1') && state.recleanedAtFetched !== state.stats.fetched) await reclean();
  phase = 'done';
  showDetails();
  await report({ idle: true, done: true, returnedQuota: state.quota });
  log.info('origin drained', { origin, fetched: state.stats.fetched, errors: state.stats.errors });
  return { origin, stats: state.stats };
}
