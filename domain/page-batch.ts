/**
 * How an origin gathers its stored pages into page batches: a batch closes at
 * `PAGE_BATCH_PAGES` pages, or `PAGE_BATCH_MS` (workflow time) after its first page came.
 * Pure: the origin workflow supplies the time and starts the batch's workflow.
 */

/** A batch closes at this many pages, or this long (workflow time) after its first page. */
export const PAGE_BATCH_PAGES = 16;
export const PAGE_BATCH_MS = 2_000;

/** The batch being filled: page ids and when its first page came (workflow time). */
export interface OpenBatch {
  pageIds: number[];
  openedAtMs: number;
}

/**
 * Adds a stored page to the open batch (opening one at `nowMs` if none is open) and says whether
 * the batch is now full. A repeat within the open batch is not added again.
 */
export function addToBatch(
  batch: OpenBatch | undefined,
  pageId: number,
  nowMs: number,
): { batch: OpenBatch; full: boolean } {
  const open = batch ?? { pageIds: [], openedAtMs: nowMs };
  if (!open.pageIds.includes(pageId)) open.pageIds.push(pageId);
  return { batch: open, full: open.pageIds.length >= PAGE_BATCH_PAGES };
}

/** Whether the open batch is `PAGE_BATCH_MS` old at `untilMs` (now, or the end of a wait). */
export function batchDue(batch: OpenBatch | undefined, untilMs: number): boolean {
  return batch !== undefined && untilMs - batch.openedAtMs >= PAGE_BATCH_MS;
}
