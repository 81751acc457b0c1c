/**
 * The change feed's log (`change_events`, db/migrations/015_change_feed.sql): the writer the
 * recrawl activities call inside the transaction of the change they record, and the reader behind
 * `GET /changes`, `gleaner changes` and the webhooks' `pages.changed` batches. Cursor and limit
 * rules for user input are in domain/change-feed.ts.
 */
import type { Queryable } from './database';

/**
 * `new` / `changed`: (re)index this URL. `removed` / `duplicate`: drop it. `flagged`: the quality gate
 * (activities/quality-flags.ts) gave the page at least one flag (soft-404, near-empty, template-only,
 * wrong-language) when its body was extracted; written after that visit's `new` / `changed`, once per
 * (crawl, page). The page stays stored but out of default search, so a follower drops it from its
 * index too (or keeps it marked low-quality); a later `new` / `changed` for the page means index it
 * again, and is followed by another `flagged` if it is still flagged. The flags and their reasons are
 * on the page (`GET /pages/:id`: `flags`, `flagReasons`).
 */
export const CHANGE_KINDS = ['new', 'changed', 'removed', 'duplicate', 'flagged'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface ChangeEvent {
  /** This event's position in the log; pass it as `since` to read what follows. */
  cursor: string;
  kind: ChangeKind;
  url: string;
  pageId: number;
  /** SHA-256 of the stored body at the time; null for `removed` (and for backfilled older visits). */
  contentHash: string | null;
  crawlId: string;
  /** For `duplicate`: the URL this page copies (its rel=canonical when that page is not stored). */
  duplicateOf: string | null;
  /** ISO 8601. */
  recordedAt: string;
}

export interface ChangePage {
  events: ChangeEvent[];
  /** Where to continue: the last event's cursor, or `since` itself when there was nothing new. */
  nextCursor: string;
  /** More events than `limit` were waiting: read again at once. */
  hasMore: boolean;
}

/**
 * The order rule lives in the database (db/migrations/021_change_feed_commit_order.sql): an event's
 * seq is drawn at its transaction's commit, under a transaction-scoped advisory lock a deferred
 * trigger takes there. Concurrent writers could otherwise commit seqs out of order (n+1 before n),
 * and a reader that saw n+1 would skip n for good. With it, a seq becomes visible only once every
 * smaller one has committed or rolled back, so "everything after my cursor" is exact, and seqs follow
 * commit order. The lock is held inside the server only, from the trigger to the end of the commit,
 * never across a round trip with a client: writers do not queue behind one another's network and
 * event-loop delays. Chosen over a reader-side safety lag, which is only right for transactions
 * shorter than the lag.
 */

export interface ChangeRecord {
  kind: ChangeKind;
  pageId: number;
  /** Omitted: the crawl that last stored the page (`pages.crawl_id`). */
  crawlId?: string;
  /** Omitted: the page's stored content hash (none for `removed`). */
  contentHash?: string | null;
  /** For `duplicate`: the page's `duplicate_of` (or rel=canonical URL) is read when omitted. */
  duplicateOf?: string | null;
}

/**
 * Appends one event in the caller's transaction, unless this crawl already recorded this kind for
 * this page (a retried activity, a page visited twice): then nothing. Returns whether it appended.
 */
export async function appendChangeEvent(tx: Queryable, record: ChangeRecord): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO change_events (kind, url, page_id, content_hash, crawl_id, duplicate_of)
     SELECT $1::text, p.url, p.id,
            CASE WHEN $5::boolean THEN $4::text WHEN $1::text = 'removed' THEN NULL ELSE p.content_hash END,
            coalesce($3::text, p.crawl_id),
            CASE WHEN $1::text <> 'duplicate' THEN NULL WHEN $7::boolean THEN $6::text
                 ELSE coalesce(o.url, p.canonical_url) END
       FROM pages p LEFT JOIN pages o ON o.id = p.duplicate_of
      WHERE p.id = $2::bigint
     ON CONFLICT (crawl_id, page_id, kind) DO NOTHING`,
    [
      record.kind,
      record.pageId,
      record.crawlId ?? null,
      record.contentHash ?? null,
      record.contentHash !== undefined,
      record.duplicateOf ?? null,
      record.duplicateOf !== undefined,
    ],
  );
  return inserted.rowCount > 0;
}

/** Appends the events in order; their seqs are drawn in this order when the transaction commits. */
export async function appendChangeEvents(tx: Queryable, records: readonly ChangeRecord[]): Promise<void> {
  for (const record of records) await appendChangeEvent(tx, record);
}

interface ChangeRow {
  cursor: string;
  kind: ChangeKind;
  url: string;
  page_id: string;
  content_hash: string | null;
  crawl_id: string;
  duplicate_of: string | null;
  recorded_at: Date | string;
}

export interface ReadChangesOptions {
  /** A cursor from an earlier read (an event's `cursor` or a page's `nextCursor`); '0' is the start. */
  since: string;
  limit: number;
  /** Only this crawl's events (the cursor still walks the one global order). */
  crawlId?: string;
}

/**
 * The whole feed's newest cursor ('0' when empty). Seqs are never deleted, so it only grows: a cursor
 * above it was never given out by this store (domain/change-feed.ts `checkCursorWithinHead`).
 */
export async function changeFeedHead(db: Queryable): Promise<string> {
  const head = await db.query<{ head: string }>(
    'SELECT coalesce(max(seq), 0)::text AS head FROM change_events',
  );
  return head.rows[0]?.head ?? '0';
}

/** The events after `since`, oldest first, at most `limit` of them. */
export async function readChanges(db: Queryable, options: ReadChangesOptions): Promise<ChangePage> {
  const { rows } = await db.query<ChangeRow>(
    // The text copy is named `cursor`: under the name `seq`, ORDER BY would sort the text ('11' < '6').
    `SELECT seq::text AS cursor, kind, url, page_id::text, content_hash, crawl_id, duplicate_of, recorded_at
       FROM change_events
      WHERE seq > $1::bigint AND ($3::text IS NULL OR crawl_id = $3)
      ORDER BY seq
      LIMIT $2`,
    [options.since, options.limit + 1, options.crawlId ?? null],
  );
  // An event after `since` proves it is within the feed. With none, compare with the head (the whole
  // feed's, whatever `crawlId` narrows to); seqs are never deleted, so the head only grows and a cursor
  // that was within it when the events were read still is.
  const hasMore = rows.length > options.limit;
  const events = rows.slice(0, options.limit).map(
    (row): ChangeEvent => ({
      cursor: row.cursor,
      kind: row.kind,
      url: row.url,
      pageId: Number(row.page_id),
      contentHash: row.content_hash,
      crawlId: row.crawl_id,
      duplicateOf: row.duplicate_of,
      recordedAt: new Date(row.recorded_at).toISOString(),
    }),
  );
  return { events, nextCursor: events.at(-1)?.cursor ?? options.since, hasMore };
}
