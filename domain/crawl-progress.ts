/**
 * What the crawl shows of its state: the progress query's answer, the details line Temporal Web
 * shows, and the summary the crawl returns. Pure reads of `CrawlState`; the time is passed in.
 */
import type { CrawlProgress, CrawlSummary } from './crawl-messages';
import type { CrawlSpec } from './crawl-spec';
import type { CrawlState } from './crawl-state';
import { type OriginStats, sumStats } from './origin-stats';

export type CrawlPhase = CrawlProgress['phase'];

export function crawlTotals(state: CrawlState): OriginStats {
  return sumStats(Object.values(state.origins).map((entry) => entry.stats));
}

export function crawlProgress(spec: CrawlSpec, state: CrawlState, phase: CrawlPhase): CrawlProgress {
  return {
    crawlId: spec.crawlId,
    phase,
    spec,
    pageBudgetLeft: state.budgetLeft,
    paused: state.paused ?? [],
    cancelled: state.cancelled === true,
    origins: Object.entries(state.origins).map(([origin, entry]) => ({
      origin,
      workflowId: entry.workflowId,
      idle: entry.idle,
      done: entry.done,
      stats: entry.stats,
    })),
    totals: crawlTotals(state),
    startedAtMs: state.startedAtMs,
  };
}

/** Markdown for Temporal Web's workflow details: the phase, totals and one row per origin. */
export function crawlDetails(spec: CrawlSpec, state: CrawlState, phase: CrawlPhase): string {
  const totals = crawlTotals(state);
  const lines = Object.entries(state.origins).map(
    ([origin, entry]) =>
      `| ${origin} | ${entry.done ? 'done' : entry.idle ? 'idle' : 'crawling'} | ${entry.stats.fetched} | ${entry.stats.errors} |`,
  );
  return (
    `**crawl ${spec.crawlId}** — ${phase}: ${totals.fetched} pages fetched, ${totals.errors} errors, ` +
    `budget left ${state.budgetLeft}\n\n| origin | state | fetched | errors |\n|---|---|---|---|\n${lines.join('\n')}`
  );
}

/**
 * The crawl's result: its origins' counters summed; failed when no page could be fetched (and an
 * operator did not cancel it), with the first origin's error as the reason.
 */
export function summarizeCrawl(spec: CrawlSpec, state: CrawlState, nowMs: number): CrawlSummary {
  const totals = crawlTotals(state);
  const failed = totals.fetched === 0 && !state.cancelled;
  const firstError = Object.values(state.origins).find((entry) => entry.stats.lastError)?.stats.lastError;
  return {
    crawlId: spec.crawlId,
    status: state.cancelled ? 'cancelled' : failed ? 'failed' : 'completed',
    pagesFetched: totals.fetched,
    pagesIndexed: totals.indexed,
    links: totals.links,
    errors: totals.errors,
    skipped: totals.skipped,
    robotsBlocked: totals.robotsBlocked,
    ...(totals.unreachable ? { unreachable: totals.unreachable } : {}),
    noindex: totals.noindex ?? 0,
    throttled: totals.throttled ?? 0,
    circuitOpens: totals.circuitOpens ?? 0,
    notModified: totals.notModified,
    bytes: totals.bytes,
    origins: Object.keys(state.origins).length,
    droppedByBudget: totals.droppedByBudget,
    pagesRendered: totals.rendered ?? 0,
    pagesNew: totals.pagesNew ?? 0,
    pagesChanged: totals.pagesChanged ?? 0,
    pagesUnchanged: totals.pagesUnchanged ?? 0,
    pagesRemoved: totals.pagesRemoved ?? 0,
    pagesDuplicate: totals.duplicates ?? 0,
    chunksEmbedded: totals.chunksEmbedded ?? 0,
    ...(failed ? { failureReason: firstError ?? 'no page could be fetched' } : {}),
    durationMs: nowMs - state.startedAtMs,
  };
}
