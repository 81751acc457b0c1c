/**
 * How an origin gathers its stored pages into page batches: a batch closes at
 * `PAGE_BATCH_PAGES` pages, or `PAGE_BATCH_MS` (workflow time) after its first page came.
 * Pure: the origin workflow supplies the time and starts the batch's workflow.
 */

/**
 * A batch closes at this many pages, or this long (workflow time) after its first page. Each batch
 * costs the server ~30 history events (its workflow, its three activities, the origin's child
 * events), so the age sets how many pages share them when the politeness gap is what limits: at the
 * default 1 s gap, 2 s made batches of 2 pages, 8 s makes them of 8 (`page-batch-age-v2`).
 */
export const PAGE_BATCH_PAGES = 16;
export const PAGE_BATCH_MS = 8_000;
/** The age of runs recorded before `page-batch-age-v2` (replay-safe). */
export const PAGE_BATCH_MS_BEFORE_V2 = 2_000;

/**
 * The first batch of a crawl's first origin closes at this many pages, so the embedding model, the
 * pipeline's slowest step, starts on the crawl's first pages instead of waiting for a whole batch
 * to be fetched and analysed. Only the first origin's: at 1,000 origins an opening batch for each
 * would add 1,000 batch workflows for nothing (their pages come in parallel anyway).
 */
export const PAGE_BATCH_OPENING_PAGES = 2;

/** The batch being filled: page ids and when its first page came (workflow time). */
export interface OpenBatch {
  pageIds: number[];
  openedAtMs: number;
}

/**
 * Adds a stored page to the open batch (opening one at `nowMs` if none is open) and says whether
 * the batch is now full at `maxPages`. A repeat within the open batch is not added again.
 */
export function addToBatch(
  batch: OpenBatch | undefined,
  pageId: number,
  nowMs: number,
  maxPages = PAGE_BATCH_PAGES,
): { batch: OpenBatch; full: boolean } {
  const open = batch ?? { pageIds: [], openedAtMs: nowMs };
  if (!open.pageIds.includes(pageId)) open.pageIds.push(pageId);
  return { batch: open, full: open.pageIds.length >= maxPages };
}

/** How many pages the origin's next batch holds: the opening size for its first when it has one. */
export function batchLimit(batchesStarted: number, openingPages: number | undefined): number {
  return batchesStarted === 0 && openingPages !== undefined ? openingPages : PAGE_BATCH_PAGES;
}

/** Whether the open batch is `ageMs` old at `untilMs` (now, or the end of a wait). */
export function batchDue(
  batch: OpenBatch | undefined,
  untilMs: number,
  ageMs: number = PAGE_BATCH_MS,
): boolean {
  return batch !== undefined && untilMs - batch.openedAtMs >= ageMs;
}
