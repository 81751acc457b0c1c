/**
 * The change feed's paging rules, shared by `GET /changes` and `gleaner changes`: what a cursor may
 * look like and how many events one read returns. Pure; the log itself (event kinds, writer,
 * reader) is db/change-events.ts over `change_events` (db/migrations/015_change_feed.sql).
 *
 * A cursor is the `seq` of the last event a reader has seen, as a decimal string: opaque to
 * clients, stable across restarts (it is a column, not a process's memory). `0` (or no cursor) is
 * the start of the log. A cursor past the feed's head (its largest seq) was never given out by this
 * store: it is another store's, or this one's before a reset, and reading on from it would skip every
 * event up to it, so it is refused (`checkCursorWithinHead`), not answered with an empty page.
 */

export const START_CURSOR = '0';
export const DEFAULT_CHANGE_LIMIT = 100;
export const MAX_CHANGE_LIMIT = 1000;
/** Largest bigint: a longer cursor names no event that can ever exist. */
const MAX_SEQ = 9_223_372_036_854_775_807n;
/** Pattern for the API schema: decimal digits, no sign, at most 19 of them. */
export const CURSOR_PATTERN = '^[0-9]{1,19}$';

export class ChangeFeedParamsError extends Error {
  override readonly name = 'ChangeFeedParamsError';
}

/**
 * A cursor as given by a user or client; undefined (none given) is the start. Canonical form out. An
 * empty one is refused: it is a lost cursor (an unset variable), not a request to start over.
 */
export function parseCursor(raw: string | undefined): string {
  if (raw === undefined) return START_CURSOR;
  if (raw === '')
    throw new ChangeFeedParamsError(
      'cursor is empty: use 0 for the start of the feed or a nextCursor from an earlier read',
    );
  if (!/^[0-9]+$/.test(raw))
    throw new ChangeFeedParamsError(
      `cursor "${raw}" is not one this feed gave out: use 0 or a nextCursor from an earlier read`,
    );
  const seq = BigInt(raw);
  if (seq > MAX_SEQ) throw new ChangeFeedParamsError(`cursor "${raw}" is out of range`);
  return seq.toString();
}

/**
 * Refuses a cursor beyond the feed's head (the largest seq it has given out, '0' for an empty feed):
 * this store never gave it out. The head itself and anything below it are fine.
 */
export function checkCursorWithinHead(since: string, head: string): void {
  if (BigInt(since) > BigInt(head))
    throw new ChangeFeedParamsError(
      `cursor "${since}" is beyond this feed's head (${head}): this store never gave it out, so it is from ` +
        'another store or from before a reset; read from 0 to rebuild',
    );
}

/** A page size: a whole number from 1 to MAX_CHANGE_LIMIT; undefined is the default. */
export function parseLimit(raw: string | number | undefined): number {
  if (raw === undefined) return DEFAULT_CHANGE_LIMIT;
  const limit = typeof raw === 'number' ? raw : /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CHANGE_LIMIT)
    throw new ChangeFeedParamsError(`limit must be a whole number from 1 to ${MAX_CHANGE_LIMIT}`);
  return limit;
}
