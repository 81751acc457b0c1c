/**
 * `gleaner changes [--since CURSOR] [--limit N] [--crawl ID] [--json]`: the change feed from a
 * cursor (db/change-events.ts). Needs only the database: DATABASE_URL, else the socket of a running
 * gleaner process, else the embedded store opened directly (as `gleaner search`).
 *
 * `--json` prints one JSON line per event, then `{"nextCursor","hasMore"}`; a script keeps that
 * cursor and passes it as `--since` next time, and so sees every change once, in order. A `--since`
 * that is empty, malformed or beyond the feed's head (another store's cursor, or one from before a
 * reset) is a usage error: exit 2, one line.
 */
import { type ChangeEvent, type ChangePage, changeFeedHead, readChanges } from '../db/change-events';
import { unknownCrawlReason } from '../db/crawl-ids';
import { ChangeFeedParamsError, checkCursorWithinHead, parseCursor, parseLimit } from '../domain/change-feed';
import { openStore } from '../infra/embedded-store';
import { UsageError } from './errors';

export interface ChangesCommandOptions {
  since?: string;
  limit?: string;
  crawl?: string;
  json?: boolean;
}

export async function runChangesCommand(options: ChangesCommandOptions): Promise<void> {
  // Checked before the store opens: a bad flag costs nothing and changes nothing (exit 2).
  const since = asUsage('--since', () => parseCursor(options.since));
  const limit = asUsage('--limit', () => parseLimit(options.limit));
  const db = await openStore({ requireCorpus: true });
  let page: ChangePage;
  try {
    // A cursor past the feed's head is refused here, once the head is known (exit 2, nothing printed).
    page = await readChanges(db, { since, limit, ...(options.crawl ? { crawlId: options.crawl } : {}) });
    // An event after `since` proves it was given out; with none, it must not be beyond the head.
    if (page.events.length === 0) {
      const head = await changeFeedHead(db);
      asUsage('--since', () => checkCursorWithinHead(since, head));
      const unknown = options.crawl === undefined ? undefined : await unknownCrawlReason(db, options.crawl);
      if (unknown) throw new UsageError(`--crawl: ${unknown}`);
    }
  } finally {
    await db.close();
  }
  if (options.json) {
    const lines = page.events.map((event) => JSON.stringify(event));
    lines.push(JSON.stringify({ nextCursor: page.nextCursor, hasMore: page.hasMore }));
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  process.stdout.write(formatChanges(page, options));
}

function asUsage<T>(flag: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw usageOf(flag, error);
  }
}

function usageOf(flag: string, error: unknown): unknown {
  return error instanceof ChangeFeedParamsError ? new UsageError(`${flag}: ${error.message}`) : error;
}

/**
 * A table: cursor, kind, time, crawl, URL (and what a duplicate copies), then the next cursor. The
 * command it suggests for the rest keeps the read's --crawl and --limit: without --crawl it would
 * list every crawl's events from there on.
 */
export function formatChanges(
  page: ChangePage,
  read: Pick<ChangesCommandOptions, 'crawl' | 'limit'> = {},
): string {
  const lines: string[] = [];
  if (page.events.length === 0) lines.push('No changes after this cursor.');
  else {
    const width = Math.max(6, ...page.events.map((event) => event.cursor.length));
    lines.push(`${'CURSOR'.padStart(width)}  KIND       RECORDED (UTC)       CRAWL  URL`);
    for (const event of page.events) lines.push(formatEvent(event, width));
  }
  lines.push(
    '',
    page.hasMore
      ? `next cursor: ${page.nextCursor} (more waiting: ${continueCommand(page.nextCursor, read)})`
      : `next cursor: ${page.nextCursor}`,
  );
  return `${lines.join('\n')}\n`;
}

function formatEvent(event: ChangeEvent, width: number): string {
  const at = event.recordedAt.slice(0, 19).replace('T', ' ');
  const copy = event.duplicateOf ? `  (copy of ${event.duplicateOf})` : '';
  return `${event.cursor.padStart(width)}  ${event.kind.padEnd(9)}  ${at}  ${event.crawlId}  ${event.url}${copy}`;
}

// Both values were checked before the read: a crawl with events has an id of plain characters, and
// the limit is a whole number, so neither needs quoting for a shell.
function continueCommand(cursor: string, read: Pick<ChangesCommandOptions, 'crawl' | 'limit'>): string {
  const words = ['gleaner changes', '--since', cursor];
  if (read.crawl !== undefined) words.push('--crawl', read.crawl);
  if (read.limit !== undefined) words.push('--limit', read.limit);
  return words.join(' ');
}
