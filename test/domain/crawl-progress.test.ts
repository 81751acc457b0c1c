import { describe, expect, it } from 'vitest';
import { crawlDetails, crawlProgress, summarizeCrawl } from '../../domain/crawl-progress';
import { parseCrawlSpec } from '../../domain/crawl-spec';
import { applyControl, applyReport, newCrawlState, routeBatch } from '../../domain/crawl-state';
import { emptyOriginStats } from '../../domain/origin-stats';

const spec = parseCrawlSpec({ seeds: ['http://a.test/'] }, 'p1');
const rules = { crawlId: 'p1', quotaWithStart: false, reportsFirst: false };

function crawlOf(...fetched: Array<[origin: string, pages: number, lastError?: string]>) {
  const state = newCrawlState(1_000, 50);
  for (const [origin, pages, lastError] of fetched) {
    routeBatch(state, rules, origin, [{ url: `${origin}/`, depth: 0 }]);
    const stats = {
      ...emptyOriginStats(),
      fetched: pages,
      indexed: pages,
      ...(lastError ? { lastError } : {}),
    };
    applyReport(state, {
      origin,
      receivedBatches: 0,
      idle: true,
      done: true,
      stats,
      returnedQuota: 0,
      quotaWanted: 0,
    });
  }
  return state;
}

describe('summarizeCrawl', () => {
  it("sums every origin's counters and times the crawl from its start", () => {
    const summary = summarizeCrawl(spec, crawlOf(['http://a.test', 3], ['http://b.test', 4]), 6_000);
    expect(summary).toMatchObject({
      crawlId: 'p1',
      status: 'completed',
      pagesFetched: 7,
      pagesIndexed: 7,
      origins: 2,
      durationMs: 5_000,
    });
    expect(summary).not.toHaveProperty('failureReason');
  });

  it('fails a crawl that fetched nothing, with the first error as the reason', () => {
    const state = crawlOf(['http://a.test', 0], ['http://b.test', 0, 'http://b.test: connection refused']);
    expect(summarizeCrawl(spec, state, 2_000)).toMatchObject({
      status: 'failed',
      failureReason: 'http://b.test: connection refused',
    });
    expect(summarizeCrawl(spec, crawlOf(), 2_000)).toMatchObject({
      status: 'failed',
      failureReason: 'no page could be fetched',
    });
  });

  it('reports a cancelled crawl as cancelled, not failed, whatever it fetched', () => {
    const state = crawlOf(['http://a.test', 0]);
    applyControl(state, { action: 'cancel' });
    const summary = summarizeCrawl(spec, state, 2_000);
    expect(summary.status).toBe('cancelled');
    expect(summary).not.toHaveProperty('failureReason');
  });
});

describe('crawlProgress and crawlDetails', () => {
  it('answer with the budget left, each origin and the totals', () => {
    const state = crawlOf(['http://a.test', 2]);
    routeBatch(state, rules, 'http://b.test', [{ url: 'http://b.test/', depth: 1 }]);
    const progress = crawlProgress(spec, state, 'crawling');
    expect(progress).toMatchObject({
      crawlId: 'p1',
      phase: 'crawling',
      pageBudgetLeft: 50,
      paused: [],
      cancelled: false,
    });
    expect(progress.origins.map((origin) => [origin.origin, origin.done])).toEqual([
      ['http://a.test', true],
      ['http://b.test', false],
    ]);
    expect(progress.totals.fetched).toBe(2);
    const details = crawlDetails(spec, state, 'crawling');
    expect(details).toContain('**crawl p1** — crawling: 2 pages fetched, 0 errors, budget left 50');
    expect(details).toContain('| http://a.test | done | 2 | 0 |');
    expect(details).toContain('| http://b.test | crawling | 0 | 0 |');
  });
});
