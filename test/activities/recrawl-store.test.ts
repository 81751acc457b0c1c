/**
 * The recrawl bookkeeping against a real Postgres (PGlite): visit classification and revisit
 * timing, tombstones, exact and near duplicates, and the due-first store frontier.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleNearDuplicate } from '../../activities/near-duplicates';
import { claimKnownPagesCore, nextKnownUrlsCore } from '../../activities/recrawl-frontier';
import {
  loadKnownPage,
  trackGone,
  trackNotModified,
  trackStoredVisit,
} from '../../activities/recrawl-visits';
import type { FetchSpec } from '../../activities/types';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';

const ORIGIN = 'http://127.0.0.1:9';
let db: PgliteDatabase;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-recrawl-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function page(p: string, hash: string, extra: Record<string, string | Date> = {}): Promise<number> {
  const url = `${ORIGIN}${p}`;
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash, etag)
     VALUES ($1, $1, $2, 'c0', 1, 200, $3, $4)
     ON CONFLICT (url) DO UPDATE SET content_hash = EXCLUDED.content_hash RETURNING id::text`,
    [url, ORIGIN, hash, `"${hash}"`],
  );
  const id = Number(rows[0]?.id);
  for (const [column, value] of Object.entries(extra)) {
    await db.query(`UPDATE pages SET ${column} = $2 WHERE id = $1`, [id, value]);
  }
  return id;
}

/** A summary of the page's current extraction, as summarizePage leaves it. */
async function summarised(p: string): Promise<void> {
  await db.query(
    `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary, tags, created_at)
     SELECT id, extracted_hash, 'test', 'test', 'a summary', ARRAY['a-tag'], now() FROM pages WHERE url = $1
     ON CONFLICT (page_id) DO UPDATE SET source_hash = EXCLUDED.source_hash`,
    [`${ORIGIN}${p}`],
  );
}

const visit = async (crawlId: string, p: string, hash: string, noindex = false, canonical?: string) => {
  const previous = await loadKnownPage(db, `${ORIGIN}${p}`);
  const id = await page(p, hash);
  const stored = {
    id,
    contentHash: hash,
    noindex,
    ...(canonical ? { canonicalUrl: `${ORIGIN}${canonical}` } : {}),
  };
  return db.transaction((tx) => trackStoredVisit(tx, crawlId, stored, previous));
};

describe('visits', () => {
  it('classifies new, unchanged and changed, once per crawl, and times the next visit', async () => {
    expect((await visit('c1', '/a', 'h1')).change).toBe('new');
    const timed = await db.query<{ ms: string; later: boolean }>(
      `SELECT revisit_interval_ms::text AS ms, next_visit_at > now() + interval '23 hours' AS later FROM pages WHERE url = $1`,
      [`${ORIGIN}/a`],
    );
    expect(timed.rows[0]).toEqual({ ms: String(24 * 3_600_000), later: true });
    await db.query(`UPDATE pages SET extracted_hash = content_hash, indexed_at = now() WHERE url = $1`, [
      `${ORIGIN}/a`,
    ]);
    await summarised('/a');
    expect(await visit('c2', '/a', 'h1')).toEqual({ change: 'unchanged', current: true, indexed: true });
    // A retried attempt reports what the first one recorded and does not time the page twice.
    expect((await visit('c2', '/a', 'h1')).change).toBe('unchanged');
    const interval = await db.query<{ ms: string }>(
      `SELECT revisit_interval_ms::text AS ms FROM pages WHERE url = $1`,
      [`${ORIGIN}/a`],
    );
    expect(interval.rows[0]?.ms).toBe(String(36 * 3_600_000));
    const changed = await visit('c3', '/a', 'h2');
    expect(changed).toEqual({ change: 'changed', current: false });
  });

  it('a 304 of a processed page is current; a 404 makes a tombstone; noindex removes a live page', async () => {
    const id = await page('/b', 'hb', { extracted_hash: 'hb', indexed_at: new Date() });
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, content, token_count) VALUES ($1, 0, 'x', 'text', 1)`,
      [id],
    );
    await db.query(`INSERT INTO links (from_page_id, to_url) VALUES ($1, $2)`, [id, `${ORIGIN}/a`]);
    // Indexed but never summarised (a corpus older than summaries): not current, so the page
    // workflow runs and summarises it.
    const unsummarised = await loadKnownPage(db, `${ORIGIN}/b`);
    if (!unsummarised) throw new Error('page /b not stored');
    expect(unsummarised.summarized).toBe(false);
    expect((await trackNotModified(db, 'c4-before', unsummarised)).current).toBe(false);
    await summarised('/b');
    const known = await loadKnownPage(db, `${ORIGIN}/b`);
    if (!known) throw new Error('page /b not stored');
    expect(await trackNotModified(db, 'c4', known)).toEqual({
      change: 'unchanged',
      current: true,
      indexed: true,
    });
    expect(await trackGone(db, 'c5', known, 410)).toEqual({ change: 'removed', current: true });
    const row = await db.query<{ reason: string; chunks: number; links: number; indexed: boolean }>(
      `SELECT removed_reason AS reason, indexed_at IS NOT NULL AS indexed,
              (SELECT count(*)::int FROM chunks WHERE page_id = $1) AS chunks,
              (SELECT count(*)::int FROM links WHERE from_page_id = $1) AS links
         FROM pages WHERE id = $1`,
      [id],
    );
    expect(row.rows[0]).toEqual({ reason: 'http-410', chunks: 0, links: 0, indexed: false });
    // Back with the same body: changed (it re-enters search), the tombstone cleared.
    expect((await visit('c6', '/b', 'hb')).change).toBe('changed');
    expect((await loadKnownPage(db, `${ORIGIN}/b`))?.removed).toBe(false);
    expect((await visit('c7', '/b', 'hb2', true)).change).toBe('removed');
    expect((await loadKnownPage(db, `${ORIGIN}/b`))?.removed).toBe(true);
  });

  it('announces no removal of a noindex page, which the feed never announced', async () => {
    expect((await visit('c20', '/hidden', 'hh', true)).change).toBe('new');
    // As the fetch stores it: the row says noindex.
    await db.query('UPDATE pages SET noindex = true WHERE url = $1', [`${ORIGIN}/hidden`]);
    const known = await loadKnownPage(db, `${ORIGIN}/hidden`);
    if (!known) throw new Error('page /hidden not stored');
    expect(await trackGone(db, 'c21', known, 404)).toEqual({ change: 'removed', current: true });
    const { rows } = await db.query<{ kind: string; crawl_id: string }>(
      `SELECT e.kind, e.crawl_id FROM change_events e JOIN pages p ON p.id = e.page_id WHERE p.url = $1`,
      [`${ORIGIN}/hidden`],
    );
    expect(rows).toEqual([]);
  });

  it('marks an exact copy of a live page as its duplicate, and lets it go when the original changes', async () => {
    const original = await page('/orig', 'same', { extracted_hash: 'same', indexed_at: new Date() });
    const copy = await visit('c8', '/copy', 'same');
    expect(copy).toEqual({ change: 'new', current: true, duplicate: true });
    const marked = await db.query<{ of: string; kind: string }>(
      `SELECT duplicate_of::text AS of, duplicate_kind AS kind FROM pages WHERE url = $1`,
      [`${ORIGIN}/copy`],
    );
    expect(marked.rows[0]).toEqual({ of: String(original), kind: 'exact' });
    await page('/orig', 'other');
    expect((await visit('c9', '/copy', 'same')).duplicate).toBeUndefined();
  });

  it('files a rel=canonical copy under a live page, never under one that is itself a copy', async () => {
    const kindOf = async (p: string) =>
      (
        await db.query<{ kind: string | null }>('SELECT duplicate_kind AS kind FROM pages WHERE url = $1', [
          `${ORIGIN}${p}`,
        ])
      ).rows[0]?.kind;
    // The canonical page is live (or not fetched yet): this page is its copy.
    await page('/guide', 'guide', { extracted_hash: 'guide', indexed_at: new Date() });
    expect((await visit('c11', '/guide?print=1', 'guide-print', false, '/guide')).duplicate).toBe(true);
    expect((await visit('c11', '/cycle-a', 'aardvarks', false, '/cycle-b')).duplicate).toBe(true);
    // Two pages naming each other: the second is not filed under the first, a copy kept out of search,
    // or neither page's words would be searchable.
    expect((await visit('c11', '/cycle-b', 'badgers', false, '/cycle-a')).duplicate).toBeUndefined();
    expect(await kindOf('/cycle-b')).toBeNull();
    // Nor under a tombstone or a noindex page.
    await page('/gone', 'gone', { removed_at: new Date(), removed_reason: 'http-404' });
    expect((await visit('c11', '/to-gone', 'zebras', false, '/gone')).duplicate).toBeUndefined();
    await db.query('UPDATE pages SET noindex = true WHERE url = $1', [`${ORIGIN}/guide`]);
    expect((await visit('c12', '/guide?print=1', 'guide-print', false, '/guide')).duplicate).toBeUndefined();
    expect(await kindOf('/guide?print=1')).toBeNull();
  });

  it('never files an empty body as a copy of another empty one', async () => {
    // Two zero-byte files (an empty .txt, a broken .pdf) share the hash of nothing: before, one was
    // recorded as the other's exact duplicate and its emptiness went unreported.
    const empty = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    await page('/empty.pdf', empty, { extracted_hash: empty, indexed_at: new Date() });
    const second = await visit('c10', '/empty.txt', empty);
    expect(second.duplicate).toBeUndefined();
    const marked = await db.query<{ kind: string | null }>(
      'SELECT duplicate_kind AS kind FROM pages WHERE url = $1',
      [`${ORIGIN}/empty.txt`],
    );
    expect(marked.rows[0]?.kind).toBeNull();
  });
});

describe('near duplicates', () => {
  it('finds a page a few bits away through the band index, and not an unrelated one', async () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${(i * 7919) % 1013}`);
    const a = await page('/near-a', 'na');
    const b = await page('/near-b', 'nb');
    const c = await page('/near-c', 'nc');
    expect(await db.transaction((tx) => settleNearDuplicate(tx, a, words.join(' ')))).toBeUndefined();
    const edited = [...words];
    edited[200] = 'edited';
    expect(await db.transaction((tx) => settleNearDuplicate(tx, b, edited.join(' ')))).toBe(a);
    const other = Array.from({ length: 400 }, (_, i) => `other${(i * 104729) % 1009}`);
    expect(await db.transaction((tx) => settleNearDuplicate(tx, c, other.join(' ')))).toBeUndefined();
  });
});

describe('the store frontier', () => {
  const spec: FetchSpec = {
    scope: 'same-origin',
    seeds: [`${ORIGIN}/`],
    domains: [],
    includePrefixes: [],
    exclude: ['*/excluded*'],
    maxDepth: 20,
    userAgent: 'test',
    allowHosts: [],
    maxBodyBytes: 1000,
    maxRedirects: 5,
  };

  it('claims every known page in scope and pages them due first; onlyDue leaves the rest', async () => {
    await page('/due-late', 'd1', { next_visit_at: new Date(Date.now() - 60_000) });
    await page('/due-early', 'd2', { next_visit_at: new Date(Date.now() - 3_600_000) });
    await page('/excluded-page', 'd3');
    const claimed = await claimKnownPagesCore(db, { crawlId: 'f1', origin: ORIGIN, spec });
    const total = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pages WHERE origin = $1 AND url NOT LIKE '%excluded%'`,
      [ORIGIN],
    );
    expect(claimed.claimedTotal).toBe(total.rows[0]?.n);
    const all = await nextKnownUrlsCore(db, { crawlId: 'f1', origin: ORIGIN, limit: 500, onlyDue: false });
    expect(all.items.some((item) => item.url.includes('excluded'))).toBe(false);
    const due = await nextKnownUrlsCore(db, { crawlId: 'f1', origin: ORIGIN, limit: 500, onlyDue: true });
    expect(due.items.every((item) => item.due)).toBe(true);
    expect(due.items.length).toBe(claimed.due);
    const order = due.items.map((item) => new URL(item.url).pathname);
    expect(order.indexOf('/due-early')).toBeLessThan(order.indexOf('/due-late'));
    // Keyset paging returns every claim once.
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const next = await nextKnownUrlsCore(db, {
        crawlId: 'f1',
        origin: ORIGIN,
        limit: 2,
        onlyDue: false,
        ...(cursor ? { afterUrl: cursor } : {}),
      });
      seen.push(...next.items.map((item) => item.url));
      cursor = next.lastUrl ?? cursor;
      if (next.done) break;
    }
    expect(seen.sort()).toEqual(all.items.map((item) => item.url).sort());
  });
});
