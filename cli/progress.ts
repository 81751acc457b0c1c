/**
 * Live crawl progress on stderr: a redrawn table per origin on a terminal, a plain line every
 * few seconds otherwise (logs, CI). Reads only Temporal queries, so it adds no history.
 */
import type { Client } from '@temporalio/client';
import { crawlWorkflowId } from '../domain/temporal-names';
import {
  type CrawlProgress,
  crawlProgressQuery,
  type OriginProgress,
  originProgressQuery,
} from '../workflows/messages';

const POLL_MS = 1_000;
const PLAIN_EVERY_MS = 5_000;
const MAX_ORIGIN_ROWS = 12;

export function watchProgress(
  client: Client,
  crawlId: string,
  options: { quiet: boolean; signal?: AbortSignal },
): () => void {
  if (options.quiet) return () => {};
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let drawnLines = 0;
  let lastPlain = 0;
  let stopped = false;
  // Queries in flight when the command stops are cancelled, so none is left retrying against a
  // connection that is about to close.
  const abortable = <T>(call: () => Promise<T>): Promise<T> =>
    options.signal ? client.withAbortSignal(options.signal, call) : call();

  async function poll(): Promise<void> {
    const crawl = client.workflow.getHandle(crawlWorkflowId(crawlId));
    const progress = await abortable(() => crawl.query(crawlProgressQuery)).catch(() => undefined);
    if (!progress || stopped) return;
    const live = await Promise.all(
      progress.origins
        .filter((origin) => !origin.done)
        .slice(0, MAX_ORIGIN_ROWS)
        .map((origin) =>
          abortable(() => client.workflow.getHandle(origin.workflowId).query(originProgressQuery)).catch(
            () => undefined,
          ),
        ),
    );
    if (stopped) return;
    const rows = live.filter((row): row is OriginProgress => row !== undefined);
    // A query that failed (a busy worker) would show its origin as empty: skip this round instead.
    if (rows.length < live.length) return;
    if (tty) draw(progress, rows);
    else if (Date.now() - lastPlain >= PLAIN_EVERY_MS) {
      lastPlain = Date.now();
      process.stderr.write(`${plainLine(progress, rows)}\n`);
    }
  }

  function draw(progress: CrawlProgress, rows: OriginProgress[]): void {
    const lines = [
      `crawl ${crawlId} — ${progress.phase}, ${elapsed()} elapsed, page budget left ${progress.pageBudgetLeft}`,
      `  ${'origin'.padEnd(40)} ${'state'.padEnd(13)} ${'fetched'.padStart(8)} ${'queued'.padStart(7)} ${'errors'.padStart(7)} ${'pages/s'.padStart(8)}`,
      ...rows.map(
        (row) =>
          `  ${row.origin.slice(0, 40).padEnd(40)} ${row.phase.padEnd(13)} ${String(row.stats.fetched).padStart(8)} ` +
          `${String(row.queued).padStart(7)} ${String(row.stats.errors).padStart(7)} ${row.ratePerSecond.toFixed(2).padStart(8)}`,
      ),
    ];
    const clear = drawnLines > 0 ? `\x1b[${drawnLines}A\x1b[J` : '';
    process.stderr.write(`${clear}${lines.join('\n')}\n`);
    drawnLines = lines.length;
  }

  function plainLine(progress: CrawlProgress, rows: OriginProgress[]): string {
    const fetched = rows.reduce((n, row) => n + row.stats.fetched, 0) + doneFetched(progress);
    const queued = rows.reduce((n, row) => n + row.queued, 0);
    const errors = rows.reduce((n, row) => n + row.stats.errors, 0) + doneErrors(progress);
    const rate = rows.reduce((n, row) => n + row.ratePerSecond, 0);
    return `[${elapsed()}] ${progress.phase}: fetched ${fetched}, queued ${queued}, errors ${errors}, ${rate.toFixed(2)} pages/s, origins ${progress.origins.length}`;
  }

  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)}s`;
  const timer = setInterval(() => {
    poll().catch(() => {});
  }, POLL_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

function doneFetched(progress: CrawlProgress): number {
  return progress.origins.filter((origin) => origin.done).reduce((n, origin) => n + origin.stats.fetched, 0);
}

function doneErrors(progress: CrawlProgress): number {
  return progress.origins.filter((origin) => origin.done).reduce((n, origin) => n + origin.stats.errors, 0);
}
