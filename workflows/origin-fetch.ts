/**
 * The origin's fetches: one URL through `fetchAndStore` (or the rendering tier), and what its
 * answer does to the origin — the politeness clock (`politeness-lap.ts`), the counters,
 * throttling, refusal and the failure-rate breaker (`domain/politeness/origin-health.ts`),
 * discoveries queued or relayed, the stored page handed to its page workflow. With
 * `perOriginConcurrency` > 1 fetches also run beside the loop.
 */
import { condition } from '@temporalio/workflow';
import type { FetchSpec } from '../activities/types';
import { pushTo } from '../domain/collections';
import type { CrawlSpec } from '../domain/crawl-spec';
import { type FrontierItem, pushFirst, size } from '../domain/frontier';
import { noteSpilled, roomFor } from '../domain/frontier-spill';
import { countAnswer, countVisit, needsPageWorkflow } from '../domain/origin-stats';
import { type Answer, onForbidden, onOutcome, onThrottle, settled } from '../domain/politeness/origin-health';
import type { RequestPacing } from '../domain/politeness/request-pacing';
import { fetchAndStore } from './origin-activities';
import type { OriginRun } from './origin-run';
import type { PageChildren } from './page-children';
import { fetchWithTier, type RenderTier } from './render-tier';

/** The part of the crawl spec a fetch needs. */
export function fetchSpecOf(spec: CrawlSpec): FetchSpec {
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
    ...(spec.contentTypes ? { contentTypes: spec.contentTypes } : {}),
    ...(spec.lang && spec.lang.length > 0 ? { lang: spec.lang } : {}),
  };
}

export interface OriginFetcher {
  /**
   * Fetches one URL and applies its answer; the loop awaits it when the origin takes one request at
   * a time. `timedHandoffMs`: the hand-off of a lap whose timer ran, to learn the next one from.
   */
  fetchNext(item: FrontierItem, pacing?: RequestPacing, timedHandoffMs?: number): Promise<void>;
  /** Starts a fetch beside the loop (an origin that may take more than one at a time). */
  start(item: FrontierItem): void;
  /** Waits out every fetch in flight; a bug in one surfaces here rather than going unnoticed. */
  settle(): Promise<void>;
  /** Fetches running beside the loop. */
  readonly inFlight: number;
  /** When the last fetch beside the loop started (workflow time). */
  readonly lastStartAtMs: number | undefined;
}

export function originFetcher(
  run: OriginRun,
  pages: PageChildren,
  /** Absent in runs recorded before the rendering tier (`patched('render-tier-v1')`). */
  renderTier: RenderTier | undefined,
): OriginFetcher {
  const { spec, origin, state, frontier, lap } = run;
  // Fetches in flight beside the loop: only when the origin may take more than one at a time.
  // With one at a time the loop awaits each fetch itself, as runs recorded before this did.
  const inFlight = new Set<Promise<void>>();
  let inFlightFailure: unknown;
  let lastStartAtMs: number | undefined;
  /** Room promised to fetches in flight, so concurrent fetches cannot overfill the frontier together. */
  let reservedRoom = 0;

  async function fetchNext(
    item: FrontierItem,
    pacing?: RequestPacing,
    timedHandoffMs?: number,
  ): Promise<void> {
    run.show('fetching');
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
        spec: fetchSpecOf(spec),
        ...(room === undefined ? {} : { frontierRoom: room }),
        ...(pacing ? { pacing } : {}),
      };
      result = renderTier ? await fetchWithTier(input, renderTier) : await fetchAndStore(input);
    } catch (error) {
      // Retries are spent: the page is lost for this crawl, the origin goes on.
      const cause = (error as Error).cause;
      state.stats.errors++;
      state.stats.lastError = `${item.url}: ${cause instanceof Error ? cause.message : (error as Error).message}`;
      lap.requestEnded();
      return;
    } finally {
      reservedRoom -= room ?? 0;
    }
    if (result.outcome === 'robots-blocked') {
      // The page budget is untouched. No request was sent, unless the URL answered with a redirect
      // into a disallowed path: then that response dates the politeness clock like any other.
      state.stats.robotsBlocked++;
      state.quota++;
      if (result.msSinceResponse !== undefined)
        lap.requestEnded(result.msSinceResponse, result.responseEnded);
      return;
    }
    // The gap runs from the response's end, not from the end of the activity's storage work.
    lap.requestEnded(result.msSinceResponse, result.responseEnded);
    lap.learn(timedHandoffMs, result.pacedMs, result.lateMs);
    state.stats.bytes += result.bytes;
    state.stats.links += result.linksStored;
    if (throttled(item, result)) return;
    settled(state, item.url);
    countAnswer(state.stats, item.url, result);
    trackForbidden(result);
    trackFailureRate(result);
    for (const found of result.discovered) {
      if (found.origin === origin) {
        if (!state.budgetExhausted) run.enqueue({ url: found.url, depth: found.depth });
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
    if (decision.kind === 'stop') run.deny(decision.message, 'droppedByStop');
    else state.stats.lastError = `${origin}: ${decision.message}`;
  }

  function trackForbidden(answer: Answer): void {
    const stopReason = onForbidden(state, spec, answer);
    if (stopReason) run.deny(stopReason, 'droppedByStop');
  }

  return {
    fetchNext,
    start(item) {
      lastStartAtMs = Date.now();
      const running: Promise<void> = fetchNext(item)
        .catch((error: unknown) => {
          inFlightFailure ??= error;
        })
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    },
    async settle() {
      if (inFlight.size > 0) await condition(() => inFlight.size === 0);
      if (inFlightFailure !== undefined) throw inFlightFailure;
    },
    get inFlight() {
      return inFlight.size;
    },
    get lastStartAtMs() {
      return lastStartAtMs;
    },
  };
}
