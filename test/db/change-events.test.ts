/**
 * The change log on a native Postgres with concurrent writers: the migration's backfill, one event
 * per (crawl, page, kind), and the ordering rule: a reader never sees seq n+1 while n may still
 * commit, because seqs are drawn at commit under the log's lock (migration 021; the hazard without
 * it is shown too);
 * and the duplicate writers (recrawl visit, near-duplicate check) announcing a copy and its release.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleNearDuplicate } from '../../activities/near-duplicates';
import { loadKnownPage, trackStoredVisit } from '../../activities/recrawl-visits';
import { appendChangeEvent, changeFeedHead, readChanges } from '../../db/change-events';
import type { Queryable } from '../../db/database';
import { loadMigrations, migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { ChangeFeedParamsError, checkCursorWithinHead } from '../../domain/change-feed';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';

let postgres: NativePostgres;
let db: PgDatabase;

beforeAll(async () => {
  postgres = await startNativePostgres();
  db = new PgDatabase(postgres.url);
  // The store as it was before the feed: the backfill test fills it, then migrates on.
  await migrate(
    db,
    loadMigrations().filter((migration) => migration.version < 15),
  );
});
afterAll(async () => {
  await db?.close();
  await postgres?.stop();
});

async function page(path: string, crawlId: string, hash: string): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash)
     VALUES ($1, $1, 'http://127.0.0.1:9', $2, 0, 200, $3) RETURNING id::text`,
    [`http://127.0.0.1:9${path}`, crawlId, hash],
  );
  return Number(rows[0]?.id);
}

/** A transaction held open until `release` is called; `inside` runs first within it. */
function heldTransaction(inside: (tx: Queryable) => Promise<unknown>) {
  let release: (commit: boolean) => void = () => {};
  const gate = new Promise<boolean>((resolve) => {
    release = resolve;
  });
  let entered: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const done = db
    .transaction(async (tx) => {
      await inside(tx);
      entered();
      if (!(await gate)) throw new Error('rolled back on purpose');
    })
    .catch((error: unknown) => error);
  return { ready, done, release: (commit = true) => release(commit) };
}

const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

describe('change_events', () => {
  it('migration 015 backfills the visits recorded before it, oldest first, and the duplicates as they stand', async () => {
    const a = await page('/a', 'old-2', 'h-a');
    const b = await page('/b', 'old-1', 'h-b');
    const copy = await page('/copy', 'old-2', 'h-a');
    await db.query(`UPDATE pages SET duplicate_of = $1, duplicate_kind = 'exact' WHERE id = $2`, [a, copy]);
    await db.query(
      `INSERT INTO page_changes (crawl_id, page_id, url, change, status, recorded_at) VALUES
         ('old-1', $1, 'http://127.0.0.1:9/a', 'new', 200, '2026-01-01T00:00:00Z'),
         ('old-1', $2, 'http://127.0.0.1:9/b', 'new', 200, '2026-01-01T00:00:01Z'),
         ('old-2', $1, 'http://127.0.0.1:9/a', 'changed', 200, '2026-01-02T00:00:00Z'),
         ('old-2', $2, 'http://127.0.0.1:9/b', 'unchanged', 304, '2026-01-02T00:00:01Z'),
         ('old-2', $3, 'http://127.0.0.1:9/copy', 'new', 200, '2026-01-02T00:00:02Z')`,
      [a, b, copy],
    );
    // Up to the feed's own migration for the backfill; the rest (021's commit-time seq among them)
    // once it is checked.
    await migrate(
      db,
      loadMigrations().filter((migration) => migration.version <= 15),
    );
    const { events } = await readChanges(db, { since: '0', limit: 100 });
    expect(
      events.map((e) => [e.kind, new URL(e.url).pathname, e.crawlId, e.contentHash, e.duplicateOf]),
    ).toEqual([
      ['new', '/a', 'old-1', null, null],
      ['new', '/b', 'old-1', 'h-b', null],
      ['changed', '/a', 'old-2', 'h-a', null],
      ['new', '/copy', 'old-2', 'h-a', null],
      ['duplicate', '/copy', 'old-2', 'h-a', 'http://127.0.0.1:9/a'],
    ]);
    await db.query('DELETE FROM change_events');
    await migrate(db);
  });

  it('adds one event per crawl, page and kind, however often it is written', async () => {
    const id = await page('/once', 'c1', 'h-once');
    expect(await appendChangeEvent(db, { kind: 'new', pageId: id, crawlId: 'c1' })).toBe(true);
    expect(await appendChangeEvent(db, { kind: 'new', pageId: id, crawlId: 'c1' })).toBe(false);
    expect(await appendChangeEvent(db, { kind: 'changed', pageId: id, crawlId: 'c2' })).toBe(true);
    expect(await appendChangeEvent(db, { kind: 'removed', pageId: id })).toBe(true);
    const { events } = await readChanges(db, { since: '0', limit: 100 });
    expect(events.map((e) => [e.kind, e.crawlId, e.contentHash])).toEqual([
      ['new', 'c1', 'h-once'],
      ['changed', 'c2', 'h-once'],
      // No crawl given: the crawl that last stored the page; a removal has no content hash.
      ['removed', 'c1', null],
    ]);
    await expect(
      db.query(`INSERT INTO change_events (kind, url, page_id, crawl_id) VALUES ('edited', 'u', 1, 'c')`),
    ).rejects.toThrow(/check/i);
  });

  it('seqs follow commit order: a writer held open blocks no other, and no reader skips its late seq', async () => {
    const first = await page('/first', 'c3', 'h1');
    const second = await page('/second', 'c3', 'h2');
    const { nextCursor: start } = await readChanges(db, { since: '0', limit: 1000 });

    const early = heldTransaction((tx) =>
      appendChangeEvent(tx, { kind: 'new', pageId: first, crawlId: 'c3' }),
    );
    await early.ready;
    // The second writer appends and commits while the first is still open: nothing holds it.
    const late = db.transaction((tx) =>
      appendChangeEvent(tx, { kind: 'new', pageId: second, crawlId: 'c3' }),
    );
    expect(await settledWithin(late, 5_000)).toBe(true);
    const seen = await readChanges(db, { since: start, limit: 10 });
    expect(seen.events.map((e) => new URL(e.url).pathname)).toEqual(['/second']);

    // The first commits after it, so its seq comes after the cursor the reader now holds.
    early.release();
    await early.done;
    const next = await readChanges(db, { since: seen.nextCursor, limit: 10 });
    expect(next.events.map((e) => new URL(e.url).pathname)).toEqual(['/first']);
    const all = await readChanges(db, { since: start, limit: 10 });
    expect(all.events.map((e) => new URL(e.url).pathname)).toEqual(['/second', '/first']);

    // A writer that rolls back leaves nothing, and the next one is read right after the last.
    const third = await page('/third', 'c3', 'h3');
    const fourth = await page('/fourth', 'c3', 'h4');
    const doomed = heldTransaction((tx) =>
      appendChangeEvent(tx, { kind: 'new', pageId: third, crawlId: 'c3' }),
    );
    await doomed.ready;
    await db.transaction((tx) => appendChangeEvent(tx, { kind: 'new', pageId: fourth, crawlId: 'c3' }));
    doomed.release(false);
    expect(await doomed.done).toBeInstanceOf(Error);
    const after = await readChanges(db, { since: next.nextCursor, limit: 10 });
    expect(after.events.map((e) => new URL(e.url).pathname)).toEqual(['/fourth']);
  });

  it('a transaction’s events keep the order it appended them in', async () => {
    const ids = [await page('/p1', 'c7', 'a'), await page('/p2', 'c7', 'b'), await page('/p3', 'c7', 'c')];
    const { nextCursor: start } = await readChanges(db, { since: '0', limit: 1000 });
    await db.transaction(async (tx) => {
      for (const id of [ids[2], ids[0], ids[1]])
        await appendChangeEvent(tx, { kind: 'new', pageId: id as number, crawlId: 'c7' });
    });
    const { events } = await readChanges(db, { since: start, limit: 10 });
    expect(events.map((e) => new URL(e.url).pathname)).toEqual(['/p3', '/p1', '/p2']);
  });

  it('without the commit-time seq (trigger off), seqs commit out of order and a cursor skips one for good', async () => {
    const x = await page('/x', 'c4', 'hx');
    const y = await page('/y', 'c4', 'hy');
    const { nextCursor: start } = await readChanges(db, { since: '0', limit: 1000 });
    // session_replication_role = replica turns the deferred trigger off for this transaction only.
    const raw = async (tx: Queryable, id: number) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `INSERT INTO change_events (kind, url, page_id, crawl_id) SELECT 'new', url, id, 'c4' FROM pages WHERE id = $1`,
        [id],
      );
    };
    const slow = heldTransaction((tx) => raw(tx, x));
    await slow.ready;
    let seen: Awaited<ReturnType<typeof readChanges>>;
    try {
      await db.transaction((tx) => raw(tx, y));
      seen = await readChanges(db, { since: start, limit: 10 });
    } finally {
      slow.release();
      await slow.done;
    }
    expect(seen.events.map((e) => new URL(e.url).pathname)).toEqual(['/y']);
    // /x committed with a smaller seq than the cursor the reader now holds: it never sees it.
    expect((await readChanges(db, { since: seen.nextCursor, limit: 10 })).events).toEqual([]);
    const everything = await readChanges(db, { since: start, limit: 10 });
    expect(everything.events.map((e) => new URL(e.url).pathname)).toEqual(['/x', '/y']);
  });

  it('a copy announced as a duplicate that stops being one is `changed`: followers index it again', async () => {
    const words = (seed: string) => Array.from({ length: 40 }, (_, i) => `${seed}${i}`).join(' ');
    const original = await page('/orig', 'c5', 'h-orig');
    const near = await page('/near', 'c5', 'h-near');
    const exact = await page('/exact', 'c5', 'h-orig');
    await db.transaction((tx) => settleNearDuplicate(tx, original, words('w')));
    const { nextCursor: start } = await readChanges(db, { since: '0', limit: 1000 });

    // Crawl c5: /near is a near copy of /orig, /exact an exact one.
    await db.transaction((tx) => settleNearDuplicate(tx, near, `${words('w')} extra`));
    await db.transaction((tx) =>
      trackStoredVisit(tx, 'c5', { id: exact, contentHash: 'h-orig', noindex: false }, undefined),
    );
    // Crawl c6: /orig changed, so neither is a copy any more though neither changed itself.
    await db.query(`UPDATE pages SET content_hash = 'h-orig-2', crawl_id = 'c6' WHERE id = $1`, [original]);
    await db.query(`UPDATE pages SET crawl_id = 'c6' WHERE id IN ($1, $2)`, [near, exact]);
    await db.transaction((tx) => settleNearDuplicate(tx, original, words('v')));
    await db.transaction((tx) => settleNearDuplicate(tx, near, `${words('w')} extra`));
    const previous = await loadKnownPage(db, 'http://127.0.0.1:9/exact');
    await db.transaction((tx) =>
      trackStoredVisit(tx, 'c6', { id: exact, contentHash: 'h-orig', noindex: false }, previous),
    );

    const { events } = await readChanges(db, { since: start, limit: 100 });
    expect(events.map((e) => [e.kind, new URL(e.url).pathname, e.crawlId])).toEqual([
      ['duplicate', '/near', 'c5'],
      ['new', '/exact', 'c5'],
      ['duplicate', '/exact', 'c5'],
      ['changed', '/near', 'c6'],
      ['changed', '/exact', 'c6'],
    ]);
    expect(events[0]?.duplicateOf).toBe('http://127.0.0.1:9/orig');
  });

  it('gives the head a cursor beyond it (another store, a reset) is refused against, instead of "nothing new"', async () => {
    const { rows } = await db.query<{ head: string }>('SELECT max(seq)::text AS head FROM change_events');
    const head = rows[0]?.head as string;
    const beyond = (BigInt(head) + 1n).toString();
    // The head itself and below are cursors this store gave out: an empty page, the cursor kept.
    expect(await readChanges(db, { since: head, limit: 10 })).toEqual({
      events: [],
      nextCursor: head,
      hasMore: false,
    });
    expect(await readChanges(db, { since: head, limit: 10, crawlId: 'c5' })).toEqual({
      events: [],
      nextCursor: head,
      hasMore: false,
    });
    // The head the readers compare a cursor with when no event follows it.
    expect(await changeFeedHead(db)).toBe(head);
    for (const since of [beyond, '1000000', '9223372036854775807']) {
      expect(await readChanges(db, { since, limit: 10 })).toEqual({
        events: [],
        nextCursor: since,
        hasMore: false,
      });
      expect(() => checkCursorWithinHead(since, head)).toThrow(ChangeFeedParamsError);
      expect(() => checkCursorWithinHead(since, head)).toThrow(`beyond this feed's head (${head})`);
    }
  });
});
