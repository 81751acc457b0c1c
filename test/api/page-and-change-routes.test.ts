/**
 * `GET /pages` says what the store knows of a page's standing — removed (a tombstone), a copy of
 * another page, flagged by the quality gate — as MCP `fetch_page` does, and `GET /changes` refuses a
 * cursor this store never gave out (one beyond the feed's head: another store's, or from before a
 * reset). Pages and events are written the way the recrawl writes them (activities/recrawl-visits.ts),
 * on a native Postgres, and read through the real routes with `app.inject()`.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKnownPage, trackGone, trackStoredVisit } from '../../activities/recrawl-visits';
import { buildApiServer } from '../../api/server';
import { appendChangeEvent, type ChangePage } from '../../db/change-events';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { logger } from '../../infra/logger';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';

const ORIGIN = 'http://127.0.0.1:9';
let postgres: NativePostgres;
let db: PgDatabase;
let app: FastifyInstance;
const ids = { live: 0, gone: 0, copy: 0, soft: 0 };

async function storePage(path: string, hash: string): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash)
     VALUES ($1, $1, $2, 'first', 1, 200, $3) RETURNING id::text`,
    [`${ORIGIN}${path}`, ORIGIN, hash],
  );
  const id = Number(rows[0]?.id);
  await db.transaction((tx) =>
    trackStoredVisit(tx, 'first', { id, contentHash: hash, noindex: false }, undefined),
  );
  return id;
}

beforeAll(async () => {
  postgres = await startNativePostgres();
  db = new PgDatabase(postgres.url);
  await migrate(db);
  ids.live = await storePage('/live.html', 'hash-live');
  ids.gone = await storePage('/p3.html', 'hash-gone');
  ids.copy = await storePage('/copy.html', 'hash-live');
  ids.soft = await storePage('/soft.html', 'hash-soft');
  // The quality gate's write (activities/quality-flags.ts): flags with reasons, and a `flagged` event.
  await db.transaction(async (tx) => {
    await tx.query(`UPDATE pages SET flags = '{soft-404}', flag_reasons = $2::jsonb WHERE id = $1`, [
      ids.soft,
      JSON.stringify({ 'soft-404': 'the title says "Page not found"' }),
    ]);
    await appendChangeEvent(tx, { kind: 'flagged', pageId: ids.soft });
  });
  // A recrawl: /p3.html answers 404 and becomes a tombstone.
  const known = await loadKnownPage(db, `${ORIGIN}/p3.html`);
  await trackGone(db, 'second', known as NonNullable<typeof known>, 404);
  app = await buildApiServer({
    db,
    temporal: async () => {
      throw new Error('no Temporal in this test');
    },
    logger: logger.child({}, { level: 'silent' }),
    docsUi: false,
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await db?.close();
  await postgres?.stop();
});

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, body: response.json() };
}

describe('GET /pages: a page with its standing in the corpus', () => {
  it('a page a recrawl found gone shows its removal, by URL and by id', async () => {
    const byUrl = await get(`/pages?url=${encodeURIComponent(`${ORIGIN}/p3.html`)}`);
    expect(byUrl.status).toBe(200);
    expect(byUrl.body.id).toBe(ids.gone);
    expect(byUrl.body.removedReason).toBe('http-404');
    expect(Date.parse(byUrl.body.removedAt as string)).not.toBeNaN();
    const byId = await get(`/pages/${ids.gone}`);
    expect(byId.body.removedReason).toBe('http-404');
    expect(byId.body.removedAt).toBe(byUrl.body.removedAt);
  });

  it('a live page says it is live, not a copy and unflagged', async () => {
    const { status, body } = await get(`/pages/${ids.live}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      removedAt: null,
      removedReason: null,
      duplicateOf: null,
      duplicateOfPageId: null,
      duplicateKind: null,
      flags: [],
      flagReasons: {},
    });
  });

  it('a copy names the page it copies and how', async () => {
    const { body } = await get(`/pages?url=${encodeURIComponent(`${ORIGIN}/copy.html`)}`);
    expect(body).toMatchObject({
      removedAt: null,
      duplicateOf: `${ORIGIN}/live.html`,
      duplicateOfPageId: ids.live,
      duplicateKind: 'exact',
    });
  });

  it('a flagged page carries its flags and their reasons', async () => {
    const { body } = await get(`/pages/${ids.soft}`);
    expect(body).toMatchObject({
      removedAt: null,
      duplicateOf: null,
      flags: ['soft-404'],
      flagReasons: { 'soft-404': 'the title says "Page not found"' },
    });
  });
});

describe('GET /changes: only cursors this store gave out', () => {
  it('serves the head itself as "nothing new" and refuses one beyond it with 400 naming the head', async () => {
    const all = await get('/changes?since=0&limit=1000');
    expect(all.status).toBe(200);
    const feed = all.body as unknown as ChangePage;
    expect(feed.events.map((event) => [event.kind, new URL(event.url).pathname])).toContainEqual([
      'flagged',
      '/soft.html',
    ]);
    const head = feed.nextCursor;
    expect(await get(`/changes?since=${head}`)).toEqual({
      status: 200,
      body: { events: [], nextCursor: head, hasMore: false },
    });
    expect((await get(`/changes?since=${head}&crawl=second`)).status).toBe(200);

    for (const since of [(BigInt(head) + 1n).toString(), '1000', '9223372036854775807']) {
      for (const query of [`since=${since}`, `since=${since}&crawl=second`]) {
        const { status, body } = await get(`/changes?${query}`);
        expect(status, query).toBe(400);
        expect(body.message, query).toContain(`query parameter "since": cursor "${since}"`);
        expect(body.message, query).toContain(`beyond this feed's head (${head})`);
        expect(body.message, query).toMatch(/another store or from before a reset/);
      }
    }
  });

  it('refuses a crawl id the store does not hold with 400, naming its latest crawls', async () => {
    // Before, `crawl=nope` answered an empty page, which looks like "nothing changed".
    const { status, body } = await get('/changes?since=0&crawl=nope');
    expect(status).toBe(400);
    expect(body.message).toMatch(/^query parameter "crawl": no crawl "nope" in the store/);
  });

  it('refuses a parameter holding a NUL character with 400 naming it, not a 500 from the database', async () => {
    for (const [url, name] of [
      ['/changes?since=0&crawl=%00', 'crawl'],
      ['/tags?domain=a%00b', 'domain'],
      ['/graph?origin=http://127.0.0.1:9&cursor=a%00', 'cursor'],
    ] as const) {
      const { status, body } = await get(url);
      expect(status, url).toBe(400);
      expect(body.message, url).toBe(`query parameter "${name}" must not contain a NUL character`);
    }
  });

  it('refuses a graph cursor that decodes to text holding a NUL character with 400, not a 500', async () => {
    // The cursor is base64url JSON; the NUL is inside it, so the query-string guard cannot see it.
    const cursor = Buffer.from(JSON.stringify([ids.live, '\u0000', ''])).toString('base64url');
    const { status, body } = await get(`/graph?origin=${encodeURIComponent(ORIGIN)}&cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body.message).toBe('query parameter "cursor" is not a cursor this API returned');
  });

  it('refuses an empty cursor with 400', async () => {
    const { status, body } = await get('/changes?since=');
    expect(status).toBe(400);
    expect(body.message).toContain('query parameter "since": cursor is empty');
  });
});

describe("the router's own refusals", () => {
  it('answer in the API error shape with the request id, as every other error does', async () => {
    for (const [url, status] of [
      ['/pages/%ZZ', 400],
      ['/crawls/%E0%A4%A', 400],
      [`/crawls/${'a'.repeat(300)}`, 414],
    ] as const) {
      const response = await app.inject({ method: 'GET', url });
      const body = response.json() as Record<string, unknown>;
      expect(response.statusCode, url).toBe(status);
      expect(body.statusCode, url).toBe(status);
      expect(body.error, url).toBe(status === 414 ? 'URI Too Long' : 'Bad Request');
      expect(body.requestId, url).toMatch(/\S/);
      expect(response.headers['x-request-id'], url).toBe(body.requestId);
      // The path is not echoed back (it can be kilobytes long).
      expect(String(body.message).length, url).toBeLessThan(100);
    }
  });
});

describe('GET /tags?domain=: the domain as search takes it', () => {
  it('narrows to a host or an origin, and refuses a value that names neither with 400', async () => {
    await db.query(
      `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, tags)
       VALUES ($1, 'hash-live', 'test', 'test', '{bayes}') ON CONFLICT (page_id) DO NOTHING`,
      [ids.live],
    );
    const tags = async (domain: string) => get(`/tags?domain=${encodeURIComponent(domain)}`);
    const expected = [{ tag: 'bayes', pages: 1 }];
    expect((await tags('127.0.0.1')).body.tags).toEqual(expected);
    // Before, an origin (what list_sources and search show) matched nothing: an empty list.
    expect((await tags(ORIGIN)).body.tags).toEqual(expected);
    expect((await tags(`${ORIGIN.toUpperCase()}/`)).body.tags).toEqual(expected);
    expect((await tags('http://127.0.0.1:10')).body.tags).toEqual([]);
    expect((await tags('other.example')).body.tags).toEqual([]);
    for (const bad of ['%%%', '127.0.0.1:9', 'http://127.0.0.1:9/docs/']) {
      const { status, body } = await tags(bad);
      expect(status, bad).toBe(400);
      expect(body.message, bad).toMatch(/^query parameter "domain": domain /);
    }
  });
});
