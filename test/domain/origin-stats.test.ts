import { describe, expect, it } from 'vitest';
import {
  addCount,
  countAnswer,
  countPageOutcomes,
  countVisit,
  emptyOriginStats,
  fetchRatePerSecond,
  needsPageWorkflow,
  sumStats,
} from '../../domain/origin-stats';

describe('countAnswer', () => {
  it('counts ok and not-modified as fetched', () => {
    const stats = emptyOriginStats();
    countAnswer(stats, 'http://a/1', { outcome: 'ok', rendered: true });
    countAnswer(stats, 'http://a/2', { outcome: 'not-modified' });
    expect(stats).toMatchObject({ fetched: 2, notModified: 1, rendered: 1, errors: 0 });
  });

  it('counts another content type as skipped, other failures as errors, with the last error', () => {
    const stats = emptyOriginStats();
    countAnswer(stats, 'http://a/x.pdf', { outcome: 'unsupported-content-type', error: 'not HTML' });
    expect(stats).toMatchObject({ fetched: 0, skipped: 1, errors: 0, lastError: 'http://a/x.pdf: not HTML' });
    countAnswer(stats, 'http://a/big', { outcome: 'too-large', error: 'over 10 MB' });
    expect(stats).toMatchObject({ skipped: 1, errors: 1, lastError: 'http://a/big: over 10 MB' });
  });
});

describe('countVisit', () => {
  it('counts the change and a current page indexed without a page workflow', () => {
    const stats = emptyOriginStats();
    countVisit(stats, { change: 'new' });
    countVisit(stats, { change: 'unchanged', current: true, indexed: true });
    countVisit(stats, { change: 'changed', current: true, duplicate: true });
    countVisit(stats, { change: 'removed', current: true });
    expect(stats).toMatchObject({
      pagesNew: 1,
      pagesUnchanged: 1,
      pagesChanged: 1,
      pagesRemoved: 1,
      duplicates: 1,
      indexed: 1,
    });
  });

  it('starts counters older runs lack', () => {
    const stats = { ...emptyOriginStats(), pagesNew: undefined };
    countVisit(stats, { change: 'new' });
    expect(stats.pagesNew).toBe(1);
  });
});

describe('needsPageWorkflow', () => {
  it('is true for a stored page that is not current', () => {
    expect(needsPageWorkflow({ pageId: 1 })).toBe(true);
    expect(needsPageWorkflow({ pageId: 1, current: true })).toBe(false);
    expect(needsPageWorkflow({})).toBe(false);
  });
});

describe('countPageOutcomes', () => {
  it('counts indexed pages, failures with the last error, vectors and duplicates', () => {
    const stats = emptyOriginStats();
    countPageOutcomes(stats, [
      { indexed: true, chunksEmbedded: 3 },
      { indexed: false, duplicate: true },
      { indexed: false, error: 'page batch b failed: boom' },
      { indexed: false },
    ]);
    expect(stats).toMatchObject({
      indexed: 1,
      chunksEmbedded: 3,
      duplicates: 1,
      errors: 1,
      lastError: 'page batch b failed: boom',
    });
  });
});

describe('addCount and sumStats', () => {
  it('adds to optional counters and sums every counter but the timestamps', () => {
    const a = { ...emptyOriginStats(), firstFetchAtMs: 5, lastFetchAtMs: 9 };
    addCount(a, 'droppedByStop', 2);
    addCount(a, 'unreachable');
    const b = emptyOriginStats();
    addCount(b, 'droppedByStop', 3);
    const total = sumStats([a, b]);
    expect(total).toMatchObject({ droppedByStop: 5, unreachable: 1 });
    expect(total.firstFetchAtMs).toBeUndefined();
  });
});

describe('fetchRatePerSecond', () => {
  it('is fetches after the first over the span between first and last fetch', () => {
    expect(fetchRatePerSecond(emptyOriginStats())).toBe(0);
    expect(
      fetchRatePerSecond({ ...emptyOriginStats(), fetched: 5, firstFetchAtMs: 0, lastFetchAtMs: 2_000 }),
    ).toBe(2);
  });
});
