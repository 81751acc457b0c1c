import { describe, expect, it } from 'vitest';
import {
  addToBatch,
  batchDue,
  batchLimit,
  PAGE_BATCH_MS,
  PAGE_BATCH_MS_BEFORE_V2,
  PAGE_BATCH_OPENING_PAGES,
  PAGE_BATCH_PAGES,
} from '../../domain/page-batch';

describe('addToBatch', () => {
  it('opens a batch at the first page, dated then', () => {
    expect(addToBatch(undefined, 7, 1_000)).toEqual({
      batch: { pageIds: [7], openedAtMs: 1_000 },
      full: false,
    });
  });

  it('keeps the opening time and does not add a page twice', () => {
    const { batch } = addToBatch(undefined, 7, 1_000);
    const again = addToBatch(batch, 7, 1_500);
    expect(again.batch).toBe(batch);
    expect(again.batch).toEqual({ pageIds: [7], openedAtMs: 1_000 });
  });

  it('says full at PAGE_BATCH_PAGES pages', () => {
    let batch: ReturnType<typeof addToBatch>['batch'] | undefined;
    let full = false;
    for (let id = 1; id <= PAGE_BATCH_PAGES; id++) ({ batch, full } = addToBatch(batch, id, 0));
    expect(batch?.pageIds).toHaveLength(PAGE_BATCH_PAGES);
    expect(full).toBe(true);
  });

  it('says full at a smaller limit when given one (the opening batch)', () => {
    const first = addToBatch(undefined, 1, 0, 2);
    expect(first.full).toBe(false);
    expect(addToBatch(first.batch, 2, 0, 2).full).toBe(true);
  });
});

describe('batchLimit', () => {
  it('is the opening size for the first batch of an origin that has one, PAGE_BATCH_PAGES otherwise', () => {
    expect(PAGE_BATCH_OPENING_PAGES).toBeLessThan(PAGE_BATCH_PAGES);
    expect(batchLimit(0, PAGE_BATCH_OPENING_PAGES)).toBe(PAGE_BATCH_OPENING_PAGES);
    expect(batchLimit(1, PAGE_BATCH_OPENING_PAGES)).toBe(PAGE_BATCH_PAGES);
    expect(batchLimit(0, undefined)).toBe(PAGE_BATCH_PAGES);
  });
});

describe('batchDue', () => {
  it('is due PAGE_BATCH_MS after the first page, never without a batch', () => {
    const batch = { pageIds: [1], openedAtMs: 1_000 };
    expect(batchDue(undefined, 1_000_000)).toBe(false);
    expect(batchDue(batch, 1_000 + PAGE_BATCH_MS - 1)).toBe(false);
    expect(batchDue(batch, 1_000 + PAGE_BATCH_MS)).toBe(true);
  });

  it('is due at the age it is given: the 2 s of runs recorded before page-batch-age-v2', () => {
    const batch = { pageIds: [1], openedAtMs: 1_000 };
    expect(PAGE_BATCH_MS_BEFORE_V2).toBeLessThan(PAGE_BATCH_MS);
    expect(batchDue(batch, 1_000 + PAGE_BATCH_MS_BEFORE_V2 - 1, PAGE_BATCH_MS_BEFORE_V2)).toBe(false);
    expect(batchDue(batch, 1_000 + PAGE_BATCH_MS_BEFORE_V2, PAGE_BATCH_MS_BEFORE_V2)).toBe(true);
    expect(batchDue(batch, 1_000 + PAGE_BATCH_MS_BEFORE_V2)).toBe(false);
  });
});
