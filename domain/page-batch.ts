/**
 * How an origin gathers its stored pages into page batches: a batch closes at
 * `PAGE_BATCH_PAGES` pages, or `PAGE_BATCH_MS` (workflow time) after its first page came; since
 * `page-batch-fill-v1`, a batch of fewer than `PAGE_BATCH_FILL_PAGES` waits up to
 * `PAGE_BATCH_MAX_MS` for more. Pure: the origin workflow supplies the time and starts the batch's
 * workflow.
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

/**
 * Pages a batch waits for past `PAGE_BATCH_MS`, up to `PAGE_BATCH_MAX_MS` (`page-batch-fill-v1`).
 * Each batch is a workflow of ~23 history events, three activities and their model and database
 * calls, whatever it holds. When the machine is busy an origin's laps run seconds apart, and a
 * 2 s batch held one page: 1,000 origins × 10 pages started 7,468 batches, 1,729 for 200 × 10,
 * the batches' events ~40 % of all the crawl's. An origin fetching at its gap fills this many in
 * about 2 s anyway, so a fast crawl's batches close as before.
 */
export const PAGE_BATCH_FILL_PAGES = 4;
export const PAGE_BATCH_MAX_MS = 10_000;

/**
 * Whether the open batch is due at `untilMs` (now, or the end of a wait): `PAGE_BATCH_MS` old; with
 * `fill`, also `PAGE_BATCH_FILL_PAGES` pages big, or else `PAGE_BATCH_MAX_MS` old. The origin also
 * closes its batch whenever it stops fetching (idle, paused, waiting for quota, finishing).
 */
export function batchDue(batch: OpenBatch | undefined, untilMs: number, fill = false): boolean {
  if (batch === undefined) return false;
  const age = untilMs - batch.openedAtMs;
  if (!fill) return age >= PAGE_BATCH_MS;
  return age >= PAGE_BATCH_MAX_MS || (age >= PAGE_BATCH_MS && batch.pageIds.length >= PAGE_BATCH_FILL_PAGES);
}
