/**
 * Near duplicates, for the page content activity: the page's SimHash is stored, and a live page
 * whose SimHash is at most NEAR_DUPLICATE_BITS away makes this one its copy (`duplicate_of`, kind
 * 'near'): the copy keeps no chunks, so it never appears in search. Candidates come from the four
 * 16-bit band indexes (db/migrations/008_recrawl.sql), never from a scan of all pages.
 *
 * A candidate with the very same body makes the page an `exact` copy, not a near one: the fetch's
 * exact check misses two pages that change to one body in the same crawl when the first one stored
 * is not indexed yet (a former copy, a page whose workflow is pending), or when the two are stored
 * at once by fetches on two origins. Both then reach this step.
 *
 * The change feed hears of it in the same transaction: `duplicate` when a page is marked, `changed`
 * when a near copy stops being one (it is indexed again), both under the crawl that stored the page.
 */
import { appendChangeEvent } from '../db/change-events';
import type { Queryable } from '../db/database';
import {
  hammingDistance,
  NEAR_DUPLICATE_BITS,
  type SimHash,
  simhash,
  simhashBands,
  simhashFromSigned,
  simhashToSigned,
} from '../domain/simhash';

/** Texts shorter than this carry too few shingles for a fingerprint to mean anything. */
const MIN_WORDS = 20;

/**
 * Stores the SimHash of `text` on the page and returns the id of the live page it nearly
 * duplicates, if any (the page is then marked and its chunks deleted), else undefined (a former
 * near-duplicate mark is cleared).
 */
export async function settleNearDuplicate(
  tx: Queryable,
  pageId: number,
  text: string,
  fingerprint?: SimHash,
): Promise<number | undefined> {
  const words = text.split(/\s+/).filter((word) => word.length > 0).length;
  if (words < MIN_WORDS) {
    await clearNearMark(tx, pageId, null);
    return undefined;
  }
  fingerprint ??= simhash(text);
  // One decision at a time, so two near copies processed at once cannot both stay live.
  await tx.query('SELECT pg_advisory_xact_lock(8008001)');
  const [b0, b1, b2, b3] = simhashBands(fingerprint);
  // The expressions match the band indexes exactly, so each OR arm is an index probe.
  const candidates = await tx.query<{ id: string; simhash: string; same_body: boolean }>(
    `SELECT id::text, simhash::text,
            content_hash = (SELECT content_hash FROM pages WHERE id = $1) AS same_body
       FROM pages
      WHERE simhash IS NOT NULL
        AND (((simhash >> 48) & 65535) = $2 OR ((simhash >> 32) & 65535) = $3
             OR ((simhash >> 16) & 65535) = $4 OR (simhash & 65535) = $5)
        AND id <> $1 AND removed_at IS NULL AND duplicate_kind IS NULL AND NOT noindex
      ORDER BY id`,
    [pageId, b0, b1, b2, b3],
  );
  const original =
    candidates.rows.find((row) => row.same_body) ??
    candidates.rows.find(
      (row) => hammingDistance(simhashFromSigned(row.simhash), fingerprint) <= NEAR_DUPLICATE_BITS,
    );
  if (original) {
    await tx.query('DELETE FROM chunks WHERE page_id = $1', [pageId]);
    await tx.query(
      // An exact copy keeps no extraction, as one filed when stored (recrawl-visits.ts): released or
      // no longer a copy, it is extracted again rather than skipped as already done.
      `UPDATE pages SET simhash = $2, duplicate_of = $3, duplicate_kind = $4, indexed_at = NULL,
              extracted_hash = CASE WHEN $4 = 'exact' THEN NULL ELSE extracted_hash END
        WHERE id = $1`,
      [pageId, simhashToSigned(fingerprint), original.id, original.same_body ? 'exact' : 'near'],
    );
    await appendChangeEvent(tx, { kind: 'duplicate', pageId });
    return Number(original.id);
  }
  await clearNearMark(tx, pageId, simhashToSigned(fingerprint));
  return undefined;
}

/** Stores the SimHash (or none) and lifts a near-duplicate mark; a lifted mark is a feed `changed`. */
async function clearNearMark(tx: Queryable, pageId: number, signedSimhash: string | null): Promise<void> {
  // The CTE reads the row as it was before the update.
  const { rows } = await tx.query<{ was: string | null }>(
    `WITH old AS (SELECT duplicate_kind FROM pages WHERE id = $1)
     UPDATE pages SET simhash = $2,
            duplicate_of = CASE WHEN duplicate_kind = 'near' THEN NULL ELSE duplicate_of END,
            duplicate_kind = CASE WHEN duplicate_kind = 'near' THEN NULL ELSE duplicate_kind END
      WHERE id = $1
      RETURNING (SELECT duplicate_kind FROM old) AS was`,
    [pageId, signedSimhash],
  );
  if (rows[0]?.was === 'near') await appendChangeEvent(tx, { kind: 'changed', pageId });
}
