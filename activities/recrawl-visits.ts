/**
 * Recrawl bookkeeping of one visit, for the fetch activity: the stored validators a conditional
 * GET sends, and what the answer means for the stored page — new, changed, unchanged or removed
 * (a tombstone), an exact or rel=canonical duplicate, and when the page is next due.
 *
 * Idempotent across activity retries: a visit is recorded in `page_changes` once per crawl and
 * page (the first attempt's verdict wins), and the page's revisit arithmetic runs only with it.
 * The row names the fetch that reports its verdict (`counted_by`, the URL the fetch asked for): a
 * retry of that fetch reports it again, any other fetch reaching the page (a redirect alias, the
 * page's own URL after an alias) reports none, so the crawl summary counts each row once.
 *
 * The change feed (`change_events`, db/change-events.ts) gets its events here, in the same
 * transaction: `new`, `changed` or `removed` with the visit's first recording, and `duplicate` when
 * a page becomes an exact or rel=canonical copy (near copies: near-duplicates.ts). A page that stops
 * being a copy without changing is `changed`: it is indexed again. noindex pages are not in the
 * corpus, so they emit no `new`/`changed`; one that was live emits `removed`.
 */
import { appendChangeEvents, type ChangeRecord } from '../db/change-events';
import type { Database, Queryable } from '../db/database';
import { nextRevisitIntervalMs, type PageChange } from '../domain/revisit';
import type { FetchAndStoreResult } from './types';

/** The stored row of a page, as a visit needs it. */
export interface KnownPage {
  id: number;
  url: string;
  etag: string | null;
  lastModified: string | null;
  contentHash: string | null;
  extractedHash: string | null;
  /** The body whose analysis failed for good (migration 024): the same body is not analysed again. */
  extractFailedHash?: string | null;
  indexed: boolean;
  /** Has a summary of its current extraction (pages indexed before summaries existed have none). */
  summarized: boolean;
  noindex: boolean;
  removed: boolean;
  duplicateKind: string | null;
  revisitIntervalMs: number | null;
}

interface KnownPageRow {
  id: string;
  url: string;
  etag: string | null;
  last_modified: string | null;
  content_hash: string | null;
  extracted_hash: string | null;
  extract_failed_hash: string | null;
  indexed: boolean;
  summarized: boolean;
  noindex: boolean;
  removed: boolean;
  duplicate_kind: string | null;
  revisit_interval_ms: string | null;
}

export async function loadKnownPage(db: Queryable, url: string): Promise<KnownPage | undefined> {
  const { rows } = await db.query<KnownPageRow>(
    `SELECT p.id::text, p.url, p.etag, p.last_modified, p.content_hash, p.extracted_hash, p.extract_failed_hash,
            p.indexed_at IS NOT NULL AS indexed, s.source_hash IS NOT NULL AS summarized,
            p.noindex, p.removed_at IS NOT NULL AS removed, p.duplicate_kind, p.revisit_interval_ms::text
       FROM pages p LEFT JOIN page_summaries s ON s.page_id = p.id AND s.source_hash = p.extracted_hash
      WHERE p.url = $1`,
    [url],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: Number(row.id),
    url: row.url,
    etag: row.etag,
    lastModified: row.last_modified,
    contentHash: row.content_hash,
    extractedHash: row.extracted_hash,
    extractFailedHash: row.extract_failed_hash,
    indexed: row.indexed,
    summarized: row.summarized,
    noindex: row.noindex,
    removed: row.removed,
    duplicateKind: row.duplicate_kind,
    revisitIntervalMs: row.revisit_interval_ms === null ? null : Number(row.revisit_interval_ms),
  };
}

/**
 * `If-None-Match` / `If-Modified-Since` from the stored validators. A tombstone asks for the whole
 * body: its chunks are gone, so "not modified" would tell us nothing we could index again.
 */
export function conditionalHeaders(known: KnownPage | undefined): {
  ifNoneMatch?: string;
  ifModifiedSince?: string;
} {
  if (!known || known.removed || known.contentHash === null) return {};
  return {
    ...(known.etag ? { ifNoneMatch: known.etag } : {}),
    ...(known.lastModified ? { ifModifiedSince: known.lastModified } : {}),
  };
}

/** What the fetch activity adds to its result for a visit the recrawl tracked. */
export type VisitFields = Pick<FetchAndStoreResult, 'change' | 'current' | 'indexed' | 'duplicate'>;

/**
 * After a 200 stored the page (inside the same transaction): classifies the visit, tombstones a
 * page that now says noindex, marks exact and rel=canonical duplicates, and times the next visit.
 */
export async function trackStoredVisit(
  tx: Queryable,
  crawlId: string,
  page: { id: number; contentHash: string; noindex: boolean; canonicalUrl?: string },
  previous: KnownPage | undefined,
  /**
   * The URL the fetch asked for, or null when the fetch reports another page's verdict (a moved
   * page's). @default the page's own URL
   */
  countedBy?: string | null,
): Promise<VisitFields> {
  const events: ChangeRecord[] = [];
  const { counted, ...visit } = await classifyStoredVisit(tx, crawlId, page, previous, events, countedBy);
  await appendChangeEvents(tx, events);
  return counted ? visit : withoutVerdict(visit);
}

/** A visit whose verdict another fetch of the crawl reports: nothing of it is counted here. */
function withoutVerdict(visit: VisitFields): VisitFields {
  const { change: _change, duplicate: _duplicate, indexed: _indexed, ...rest } = visit;
  return rest;
}

/** trackStoredVisit's work; the feed events it decides on are added to `events`, not appended. */
async function classifyStoredVisit(
  tx: Queryable,
  crawlId: string,
  page: { id: number; contentHash: string; noindex: boolean; canonicalUrl?: string },
  previous: KnownPage | undefined,
  events: ChangeRecord[],
  countedBy: string | null | undefined,
): Promise<VisitFields & { counted: boolean }> {
  const wasLive = previous !== undefined && !previous.removed && !previous.noindex;
  const sameBody = previous?.contentHash === page.contentHash;
  let change: PageChange;
  if (!previous) change = 'new';
  else if (page.noindex) change = wasLive ? 'removed' : sameBody ? 'unchanged' : 'changed';
  else if (previous.removed || previous.noindex) change = 'changed';
  else change = sameBody ? 'unchanged' : 'changed';

  const event = page.noindex ? (change === 'removed' ? change : undefined) : feedEvent(change);
  const recorded = await recordChange(tx, crawlId, page.id, change, 200, previous, events, countedBy, event);
  const { counted } = recorded;
  if (recorded.change !== change) return { change: recorded.change, current: false, counted };

  if (page.noindex) {
    if (wasLive) await tombstone(tx, page.id, 'noindex');
    return { change, current: true, counted };
  }
  // Only a tombstone comes back to life: for every other page the update changed nothing and cost a
  // round trip and a dead row version per stored page (the embedded store has no autovacuum).
  if (previous?.removed)
    await tx.query('UPDATE pages SET removed_at = NULL, removed_reason = NULL WHERE id = $1', [page.id]);

  const duplicate = await markExactOrCanonicalDuplicate(tx, page, previous);
  if (duplicate) {
    // A copy already announced as one stays dropped downstream unless this visit said new/changed.
    const wasCopy = previous?.duplicateKind === 'exact' || previous?.duplicateKind === 'canonical';
    const found = !wasCopy || event !== undefined;
    if (found) events.push({ kind: 'duplicate', pageId: page.id, crawlId });
    // pagesDuplicate counts this crawl's findings (its feed's `duplicate` events), as pagesNew and
    // pagesChanged do: a known copy that is unchanged is an unchanged page, not a copy found again.
    return { change, current: true, counted, ...(found ? { duplicate: true } : {}) };
  }
  if (
    change === 'unchanged' &&
    (previous?.duplicateKind === 'exact' || previous?.duplicateKind === 'canonical')
  )
    events.push({ kind: 'changed', pageId: page.id, crawlId });

  // An unchanged page still goes through its page workflow when it was never summarised: that is
  // how a corpus indexed before summaries existed gets them (nothing is extracted or embedded again).
  // One whose analysis failed for good on this body would only fail again: it is left as it is.
  const failed = change === 'unchanged' && failedBefore(previous, page.contentHash);
  const current =
    failed ||
    (change === 'unchanged' &&
      previous?.extractedHash === page.contentHash &&
      ((previous.indexed && previous.summarized) || previous.duplicateKind === 'near'));
  // An unchanged near copy (current without its page workflow) was counted a duplicate when found.
  return {
    change,
    current,
    counted,
    ...(current && !failed && previous?.indexed ? { indexed: true } : {}),
  };
}

/** Whether the analysis of this body (`contentHash`) failed for good before (page-content.ts). */
function failedBefore(known: KnownPage | undefined, contentHash: string | null): boolean {
  return (
    contentHash !== null && known?.extractFailedHash === contentHash && known.extractedHash !== contentHash
  );
}

/** A 304 for a known page: nothing to store but the visit; processing only if it never finished. */
export async function trackNotModified(
  db: Database,
  crawlId: string,
  known: KnownPage,
): Promise<VisitFields> {
  return db.transaction(async (tx) => {
    await tx.query('UPDATE pages SET fetched_at = now() WHERE id = $1', [known.id]);
    // A retried attempt whose first one stored the page gets 304 for it: report that visit's verdict.
    const recorded = await recordChange(tx, crawlId, known.id, 'unchanged', 304, known, [], known.url);
    const { change } = recorded;
    const extracted = known.extractedHash === known.contentHash;
    const duplicate = known.duplicateKind !== null;
    // The body's analysis failed for good: it would fail again, at the cost of another deadline.
    const failed = !known.noindex && !duplicate && failedBefore(known, known.contentHash);
    // A near duplicate was extracted (its SimHash decided it); exact and canonical copies never are.
    const current =
      known.noindex ||
      failed ||
      (duplicate
        ? known.duplicateKind !== 'near' || extracted
        : extracted && known.indexed && known.summarized);
    const visit = {
      change,
      current,
      // A 304 finds no copy: a known one was counted when found. Only a retry reporting its first
      // attempt's new/changed verdict counts it, as that attempt's result never reached the workflow.
      ...(duplicate && change !== 'unchanged' ? { duplicate: true } : {}),
      ...(current && !failed && known.indexed && !duplicate && !known.noindex ? { indexed: true } : {}),
    };
    return recorded.counted ? visit : withoutVerdict(visit);
  });
}

/**
 * A known page answering 404 or 410, or no longer serving its content (it redirects elsewhere, or
 * is now a redirect stub), leaves search and the live link graph; its row stays.
 */
export async function trackGone(
  db: Database,
  crawlId: string,
  known: KnownPage,
  status: number,
  {
    reason = `http-${status}`,
    countedBy = known.url,
  }: {
    /** The tombstone's `removed_reason`. @default `http-<status>` */
    reason?: string;
    /** As trackStoredVisit's. @default the page's own URL */
    countedBy?: string | null;
  } = {},
): Promise<VisitFields> {
  return db.transaction(async (tx) => {
    const change: PageChange = known.removed ? 'unchanged' : 'removed';
    const events: ChangeRecord[] = [];
    const recorded = await recordChange(
      tx,
      crawlId,
      known.id,
      change,
      status,
      known,
      events,
      countedBy,
      // A noindex page was never announced in the feed (no `new`), so its end is not announced either.
      known.noindex ? undefined : feedEvent(change),
    );
    if (recorded.change === change && !known.removed) {
      await tombstone(tx, known.id, reason);
      await tx.query('DELETE FROM links WHERE from_page_id = $1', [known.id]);
    }
    await appendChangeEvents(tx, events);
    return recorded.counted ? { change: recorded.change, current: true } : { current: true };
  });
}

/** The feed's event for a visit's verdict: none for an unchanged page. */
function feedEvent(change: PageChange): Exclude<PageChange, 'unchanged'> | undefined {
  return change === 'unchanged' ? undefined : change;
}

/**
 * Records the visit once per crawl and page and, with it, the page's revisit interval, next visit
 * and last change, and adds the change feed's `event` to `events` for the caller to append last.
 * Returns the change recorded (an earlier visit's, when one was recorded) and whether this fetch
 * (`countedBy`) reports it: the fetch that recorded it, or the first to reach a visit recorded
 * uncounted. Decided here, in the visit's transaction: a check before the fetch could neither tell
 * a retry from another fetch nor see a visit committed meanwhile.
 */
async function recordChange(
  tx: Queryable,
  crawlId: string,
  pageId: number,
  change: PageChange,
  status: number,
  previous: KnownPage | undefined,
  events: ChangeRecord[],
  /** The fetch's URL; undefined: the page's own. */
  countedBy: string | null | undefined,
  event?: Exclude<PageChange, 'unchanged'>,
): Promise<{ change: PageChange; counted: boolean }> {
  // The visit's record and the page's next-visit arithmetic in one round trip; the UPDATE runs only
  // for the row the INSERT really added, so a retried attempt's visit changes nothing.
  const intervalMs = nextRevisitIntervalMs(previous?.revisitIntervalMs, change);
  const recorded = await tx.query(
    `WITH visit AS (
       INSERT INTO page_changes (crawl_id, page_id, url, change, status, counted_by)
       SELECT $1, id, url, $3, $4, CASE WHEN $8 THEN url ELSE $7 END FROM pages WHERE id = $2
       ON CONFLICT (crawl_id, page_id) DO NOTHING
       RETURNING page_id)
     UPDATE pages SET revisit_interval_ms = $5, next_visit_at = now() + $5::bigint * interval '1 millisecond',
            last_changed_at = CASE WHEN $6 THEN now() ELSE last_changed_at END
      WHERE id = (SELECT page_id FROM visit)`,
    [
      crawlId,
      pageId,
      change,
      status,
      intervalMs,
      change !== 'unchanged',
      countedBy ?? null,
      countedBy === undefined,
    ],
  );
  if (recorded.rowCount === 0) {
    // Claims a visit recorded uncounted, or reads who counts it, in one round trip.
    const earlier = await tx.query<{ change: PageChange; counted: boolean }>(
      `WITH asker AS (SELECT CASE WHEN $4 THEN url ELSE $3 END AS url FROM pages WHERE id = $2),
       claimed AS (
         UPDATE page_changes SET counted_by = (SELECT url FROM asker)
          WHERE crawl_id = $1 AND page_id = $2 AND counted_by IS NULL AND (SELECT url FROM asker) IS NOT NULL
          RETURNING change)
       SELECT change, true AS counted FROM claimed
       UNION ALL
       SELECT change, counted_by IS NOT DISTINCT FROM (SELECT url FROM asker) AND counted_by IS NOT NULL
         FROM page_changes
        WHERE crawl_id = $1 AND page_id = $2 AND NOT EXISTS (SELECT 1 FROM claimed)`,
      [crawlId, pageId, countedBy ?? null, countedBy === undefined],
    );
    const row = earlier.rows[0];
    return row ? { change: row.change, counted: row.counted } : { change, counted: false };
  }
  if (event) events.push({ kind: event, pageId, crawlId });
  return { change, counted: countedBy !== null };
}

/** sha256 of zero bytes: the content hash of an empty body. */
const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Out of search: chunks (and so vectors) deleted, the row kept with the time and the reason. */
async function tombstone(tx: Queryable, pageId: number, reason: string): Promise<void> {
  await tx.query('DELETE FROM chunks WHERE page_id = $1', [pageId]);
  // The extraction goes too: a page that comes back with the same body is extracted again.
  await tx.query(
    `UPDATE pages SET removed_at = now(), removed_reason = $2, indexed_at = NULL, extracted_hash = NULL
      WHERE id = $1`,
    [pageId, reason],
  );
}

/**
 * The same body already live under another URL (the lowest id keeps it), or a rel=canonical naming
 * another in-scope URL: this copy records `duplicate_of` and is never indexed. Re-evaluated on
 * every 200, so a copy whose original disappears or changes is indexed again.
 */
async function markExactOrCanonicalDuplicate(
  tx: Queryable,
  page: { id: number; contentHash: string; canonicalUrl?: string },
  previous: KnownPage | undefined,
): Promise<boolean> {
  // An empty body is no copy of anything: two zero-byte files (a .txt and a broken .pdf) share its
  // hash and were filed as duplicates of each other, their emptiness never reported.
  const exact =
    page.contentHash === EMPTY_BODY_SHA256
      ? { rows: [] }
      : await tx.query<{ id: string }>(
          `SELECT id::text FROM pages
            WHERE content_hash = $1 AND id <> $2 AND removed_at IS NULL AND duplicate_kind IS NULL AND NOT noindex
              AND (id < $2 OR indexed_at IS NOT NULL)
            ORDER BY id LIMIT 1`,
          [page.contentHash, page.id],
        );
  const original = exact.rows[0]?.id;
  if (original !== undefined) {
    await markDuplicate(tx, page.id, Number(original), 'exact', null);
    return true;
  }
  if (page.canonicalUrl) {
    const target = await tx.query<{ id: string; original: boolean }>(
      `SELECT id::text, (removed_at IS NULL AND NOT noindex AND duplicate_kind IS DISTINCT FROM 'exact'
                         AND duplicate_kind IS DISTINCT FROM 'canonical') AS original
         FROM pages WHERE url = $1`,
      [page.canonicalUrl],
    );
    const row = target.rows[0];
    // A canonical page that is stored but will never be searchable (a tombstone, noindex, or itself
    // an exact or canonical copy, as in two pages naming each other) holds none of this page's
    // content: filed as its copy, this page would be indexed nowhere.
    if (row === undefined || row.original) {
      await markDuplicate(
        tx,
        page.id,
        row === undefined ? null : Number(row.id),
        'canonical',
        page.canonicalUrl,
      );
      return true;
    }
  }
  // Only a page stored as such a copy has one to clear (`previous` is its row, read in this
  // transaction); for every other page this was a round trip that matched nothing.
  if (previous?.duplicateKind === 'exact' || previous?.duplicateKind === 'canonical')
    await tx.query(
      `UPDATE pages SET duplicate_of = NULL, duplicate_kind = NULL, canonical_url = NULL
        WHERE id = $1 AND duplicate_kind IN ('exact', 'canonical')`,
      [page.id],
    );
  return false;
}

async function markDuplicate(
  tx: Queryable,
  pageId: number,
  originalId: number | null,
  kind: 'exact' | 'canonical',
  canonicalUrl: string | null,
): Promise<void> {
  await tx.query('DELETE FROM chunks WHERE page_id = $1', [pageId]);
  await tx.query(
    `UPDATE pages SET duplicate_of = $2, duplicate_kind = $3, canonical_url = $4, indexed_at = NULL,
            extracted_hash = NULL
      WHERE id = $1`,
    [pageId, originalId, kind, canonicalUrl],
  );
}

/** Fills the fetch result's recrawl fields for answers other than 200 (304, 404, 410). */
export async function trackUnstored(
  db: Database,
  crawlId: string,
  known: KnownPage | undefined,
  result: FetchAndStoreResult,
): Promise<FetchAndStoreResult> {
  if (!known) return result;
  if (result.outcome === 'not-modified') {
    const visit = await trackNotModified(db, crawlId, known);
    return { ...result, ...visit, pageId: known.id, ...(known.noindex ? { noindex: true } : {}) };
  }
  if (result.outcome === 'http-error' && (result.status === 404 || result.status === 410)) {
    // An expected end of a known page, not a crawl error.
    const { error: _gone, ...rest } = result;
    return { ...rest, ...(await trackGone(db, crawlId, known, result.status)) };
  }
  return result;
}
