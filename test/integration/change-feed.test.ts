/**
 * The change feed on real parts (Temporal dev server, native Postgres + pgvector, in-process
 * workers) over a site served on 127.0.0.1: a first crawl, then a recrawl after an edit, two
 * deletions (404, 410), a new page, and an exact and a near copy. Read through `GET /changes` in
 * pages of 2 from cursor 0 and from every mid cursor, across a restart of the API, and through
 * `gleaner changes --json` run as one process per page: every change exactly once, in order, with
 * the right kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackGone } from '../../activities/recrawl-visits';
import { type RunningApi, startApiServer } from '../../api/server';
import { appendChangeEvent, type ChangeEvent, type ChangePage } from '../../db/change-events';
import { PgDatabase } from '../../db/pg-database';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { logger } from '../../infra/logger';
import { pageHtml } from '../../testbed/generated-site';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import { serveVersionedPages, type VersionedPages } from '../../testbed/versioned-site';
import type { CrawlSummary } from '../../workflows/messages';

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'te',
  'vo',
  'zi',
  'pa',
  'da',
  'fe',
  'go',
  'hu',
  'ji',
  'be',
];

/** Pseudo-prose, distinct per seed, so no two pages are near copies by chance. */
function prose(seed: number, count: number): string[] {
  let x = seed * 7919 + 17;
  return Array.from({ length: count }, () => {
    let word = '';
    for (let s = 0; s < 3; s++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      word += SYLLABLES[(x >>> 16) % 16];
    }
    return word;
  });
}

const path = (i: number) => `/p${i}.html`;
const content = (i: number, words: string[]) => pageHtml(`Page ${i}`, ['/'], words.join(' '));
const CONTENT_PAGES = 5;

let stack: TestStack;
let site: SiteServer;
let pages: VersionedPages;
let api: RunningApi;
const bodies = new Map<number, string[]>();

function apiDeps(db = stack.db) {
  return {
    db,
    temporal: async () => stack.client,
    logger: logger.child({}, { level: 'warn' }),
    host: '127.0.0.1',
    port: 0,
  };
}

beforeAll(async () => {
  site = await serveSite(undefined);
  pages = serveVersionedPages(site);
  const links = Array.from({ length: CONTENT_PAGES }, (_, i) => path(i + 1));
  pages.set('/', pageHtml('Index', links, 'The index of the site.'));
  for (let i = 1; i <= CONTENT_PAGES; i++) {
    // Page 5 is long: its near copy is one word apart out of 1,000.
    bodies.set(i, prose(i, i === 5 ? 1000 : 300));
    pages.set(path(i), content(i, bodies.get(i) as string[]));
  }
  stack = await startTestStack();
  api = await startApiServer(apiDeps());
}, 240_000);

afterAll(async () => {
  await api?.close();
  await stack?.close();
  await site?.close();
});

async function crawl(crawlId: string): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
  });
}

async function getChanges(base: string, query: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}/changes?${query}`);
  return { status: response.status, body: await response.json() };
}

/** Walks the feed from `since` to its end in pages of `limit`, checking each page's cursor rules. */
async function walk(base: string, since: string, limit: number): Promise<ChangeEvent[]> {
  const seen: ChangeEvent[] = [];
  let cursor = since;
  for (;;) {
    const { status, body } = await getChanges(base, `since=${cursor}&limit=${limit}`);
    expect(status).toBe(200);
    const page = body as ChangePage;
    expect(page.events.length).toBeLessThanOrEqual(limit);
    expect(page.nextCursor).toBe(page.events.at(-1)?.cursor ?? cursor);
    seen.push(...page.events);
    cursor = page.nextCursor;
    if (!page.hasMore) return seen;
    expect(page.events.length).toBe(limit);
  }
}

/** `[kind, path, crawl]` of events, for comparing with what the crawls did. */
const described = (events: readonly ChangeEvent[]) =>
  events.map((event) => [event.kind, new URL(event.url).pathname, event.crawlId]);

describe('the change feed across a crawl and a recrawl', () => {
  let all: ChangeEvent[] = [];

  it('a first crawl emits `new` for every page, so a follower from cursor 0 can rebuild the corpus', async () => {
    const first = await crawl('feed-1');
    expect(first.status).toBe('completed');
    expect(first.pagesNew).toBe(CONTENT_PAGES + 1);
    const events = await walk(api.url, '0', 2);
    expect(described(events).sort()).toEqual(
      ['/', ...Array.from({ length: CONTENT_PAGES }, (_, i) => path(i + 1))]
        .map((p) => ['new', p, 'feed-1'])
        .sort(),
    );
    for (const event of events) expect(event.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a recrawl emits changed, removed, new and duplicate once each, after the first crawl, in one order', async () => {
    pages.set(path(1), content(1, [...(bodies.get(1) as string[]), ...prose(101, 60)]));
    pages.remove(path(2), 404);
    pages.remove(path(3), 410);
    pages.set('/fresh.html', content(6, prose(6, 300)));
    pages.set('/copy-exact.html', pages.html(path(4)) as string);
    const near = [...(bodies.get(5) as string[])];
    near[500] = 'different';
    pages.set('/copy-near.html', content(5, near));
    const links = [...Array.from({ length: CONTENT_PAGES }, (_, i) => path(i + 1)), '/fresh.html'];
    pages.set('/', pageHtml('Index', [...links, '/copy-exact.html', '/copy-near.html'], 'The index.'));

    const second = await crawl('feed-2');
    expect(second.status).toBe('completed');
    expect([second.pagesNew, second.pagesChanged, second.pagesRemoved, second.pagesDuplicate]).toEqual([
      3, 2, 2, 2,
    ]);
    // A recrawl with nothing to tell adds nothing: unchanged visits are no events.
    const third = await crawl('feed-3');
    expect(third.status).toBe('completed');
    expect(third.pagesUnchanged).toBeGreaterThan(0);
    // The copies are unchanged too: counted as such, not as duplicates found again.
    expect(third.pagesDuplicate).toBe(0);

    all = await walk(api.url, '0', 2);
    const cursors = all.map((event) => BigInt(event.cursor));
    for (let i = 1; i < cursors.length; i++) expect(cursors[i]).toBeGreaterThan(cursors[i - 1] as bigint);
    const keys = all.map((event) => `${event.crawlId} ${event.pageId} ${event.kind}`);
    expect(new Set(keys).size).toBe(keys.length);

    const firstCrawl = all.filter((event) => event.crawlId === 'feed-1');
    const recrawl = all.filter((event) => event.crawlId === 'feed-2');
    expect(all.filter((event) => event.crawlId === 'feed-3')).toEqual([]);
    expect(all).toEqual([...firstCrawl, ...recrawl]);
    expect(described(recrawl).sort()).toEqual(
      [
        ['changed', '/', 'feed-2'],
        ['changed', path(1), 'feed-2'],
        ['removed', path(2), 'feed-2'],
        ['removed', path(3), 'feed-2'],
        ['new', '/fresh.html', 'feed-2'],
        ['new', '/copy-exact.html', 'feed-2'],
        ['duplicate', '/copy-exact.html', 'feed-2'],
        ['new', '/copy-near.html', 'feed-2'],
        ['duplicate', '/copy-near.html', 'feed-2'],
      ].sort(),
    );
    // A copy is announced after it appears, naming the page it copies; removed pages carry no hash.
    for (const copy of ['/copy-exact.html', '/copy-near.html']) {
      const kinds = recrawl
        .filter((event) => new URL(event.url).pathname === copy)
        .map((event) => event.kind);
      expect(kinds).toEqual(['new', 'duplicate']);
    }
    const duplicateOf = new Map(
      recrawl
        .filter((event) => event.kind === 'duplicate')
        .map((event) => [new URL(event.url).pathname, new URL(event.duplicateOf as string).pathname]),
    );
    expect(Object.fromEntries(duplicateOf)).toEqual({
      '/copy-exact.html': path(4),
      '/copy-near.html': path(5),
    });
    for (const event of recrawl.filter((e) => e.kind === 'removed')) expect(event.contentHash).toBeNull();
    // The removed pages' rows say so through `GET /pages` too (their `status` is the last stored fetch's).
    for (const [i, reason] of [
      [2, 'http-404'],
      [3, 'http-410'],
    ] as const) {
      const response = await fetch(`${api.url}/pages?url=${encodeURIComponent(`${site.origin}${path(i)}`)}`);
      expect(response.status).toBe(200);
      const stored = (await response.json()) as { removedAt: string | null; removedReason: string | null };
      expect(stored.removedReason, path(i)).toBe(reason);
      expect(stored.removedAt, path(i)).not.toBeNull();
    }
    // The changed page's event carries the new body's hash.
    const stored = await stack.db.query<{ content_hash: string }>(
      'SELECT content_hash FROM pages WHERE url = $1',
      [`${site.origin}${path(1)}`],
    );
    expect(recrawl.find((event) => event.url.endsWith(path(1)))?.contentHash).toBe(
      stored.rows[0]?.content_hash,
    );
  });

  it('from any mid cursor, the rest once, in order', async () => {
    expect(all.length).toBeGreaterThan(10);
    for (const [i, event] of all.entries()) {
      const rest = await walk(api.url, event.cursor, 3);
      expect(rest, `from cursor ${event.cursor}`).toEqual(all.slice(i + 1));
    }
    // The end of the log: nothing more, and the cursor stays where it is.
    const last = all.at(-1) as ChangeEvent;
    const { body } = await getChanges(api.url, `since=${last.cursor}`);
    expect(body).toEqual({ events: [], nextCursor: last.cursor, hasMore: false });
    // `crawl` narrows the same order to one crawl.
    const { body: narrowed } = await getChanges(api.url, 'crawl=feed-2&limit=1000');
    expect((narrowed as ChangePage).events).toEqual(all.filter((event) => event.crawlId === 'feed-2'));
  });

  it('a reader restarted (a new API on a new connection) continues from its cursor with no loss or repeat', async () => {
    const read: ChangeEvent[] = [];
    let cursor = '0';
    for (let i = 0; i < 3; i++) {
      const { body } = await getChanges(api.url, `since=${cursor}&limit=2`);
      read.push(...(body as ChangePage).events);
      cursor = (body as ChangePage).nextCursor;
    }
    await api.close();
    const db = new PgDatabase(stack.postgres.url);
    const restarted = await startApiServer(apiDeps(db));
    try {
      read.push(...(await walk(restarted.url, cursor, 2)));
    } finally {
      await restarted.close();
      await db.close();
    }
    expect(read).toEqual(all);
    api = await startApiServer(apiDeps());
  });

  it('a retried visit or a replayed event adds nothing', async () => {
    const { rows } = await stack.db.query<{ id: string }>('SELECT id::text FROM pages WHERE url = $1', [
      `${site.origin}${path(2)}`,
    ]);
    const pageId = Number(rows[0]?.id);
    expect(await appendChangeEvent(stack.db, { kind: 'removed', pageId, crawlId: 'feed-2' })).toBe(false);
    const known = {
      id: pageId,
      url: `${site.origin}${path(2)}`,
      etag: null,
      lastModified: null,
      contentHash: null,
      extractedHash: null,
      indexed: true,
      summarized: true,
      noindex: false,
      removed: false,
      duplicateKind: null,
      revisitIntervalMs: null,
    };
    // The fetch activity's second attempt at the 404, as Temporal would retry it.
    expect((await trackGone(stack.db, 'feed-2', known, 404)).change).toBe('removed');
    expect(await walk(api.url, '0', 1000)).toEqual(all);
  });

  it('gleaner changes --json: one process per page of 4 walks the same feed and prints where to continue', async () => {
    const read: ChangeEvent[] = [];
    let cursor: string | undefined;
    for (let runs = 0; runs < 20; runs++) {
      const args = ['changes', '--json', '--limit', '4', ...(cursor ? ['--since', cursor] : [])];
      const result = await runGleaner(args, { DATABASE_URL: stack.postgres.url });
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout.trim().split('\n');
      const tail = JSON.parse(lastLine(result.stdout)) as { nextCursor: string; hasMore: boolean };
      read.push(...lines.slice(0, -1).map((line) => JSON.parse(line) as ChangeEvent));
      cursor = tail.nextCursor;
      if (!tail.hasMore) break;
    }
    expect(read).toEqual(all);
    expect(cursor).toBe(all.at(-1)?.cursor);

    const table = await runGleaner(['changes', '--since', all.at(-3)?.cursor as string], {
      DATABASE_URL: stack.postgres.url,
    });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(all.at(-1)?.url);
    expect(lastLine(table.stdout)).toBe(`next cursor: ${all.at(-1)?.cursor}`);
  });
});

describe('bad parameters', () => {
  /** The feed's head: the last event's cursor, the largest this store has given out. */
  const feedHead = async () => ((await getChanges(api.url, 'limit=1000')).body as ChangePage).nextCursor;

  it('GET /changes answers 400 naming the parameter for a bad cursor or limit', async () => {
    const head = await feedHead();
    expect(BigInt(head)).toBeGreaterThan(0n);
    for (const [query, words] of [
      ['since=abc', '"since"'],
      ['since=-1', '"since"'],
      ['since=1.5', '"since"'],
      ['since=99999999999999999999', 'out of range'],
      ['limit=0', '"limit"'],
      ['limit=1001', '"limit"'],
      ['limit=many', '"limit"'],
      ['cursor=3', '"cursor"'],
      ['since=', 'cursor is empty'],
      // A cursor past the head: another store's, or from before a reset.
      [`since=${BigInt(head) + 1n}`, `beyond this feed's head (${head})`],
      ['since=1000000', `beyond this feed's head (${head})`],
    ] as const) {
      const { status, body } = await getChanges(api.url, query);
      expect(status, query).toBe(400);
      expect((body as { message: string }).message, query).toContain(words);
    }
  });

  it('gleaner changes refuses a bad --since or --limit with one line and exit 2', async () => {
    const head = await feedHead();
    for (const [args, words] of [
      [['--since', 'yesterday'], '--since'],
      [['--limit', '0'], '--limit'],
      [['--limit', '5000'], '--limit'],
      [['--since', ''], '--since: cursor is empty'],
      [['--since', '1000000'], `--since: cursor "1000000" is beyond this feed's head (${head})`],
    ] as const) {
      const result = await runGleaner(['changes', ...args], { DATABASE_URL: stack.postgres.url });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(words);
    }
  });
});
