/**
 * The HTTP API over real HTTP on loopback, against the real stack: a Temporal dev server, a native
 * Postgres with pgvector and in-process workers. A crawl of the skopt-0.9 site (served on
 * 127.0.0.1) is started through `POST /crawls`; every read endpoint is then checked against what
 * the database holds, and the failure paths (400, 401/403, 404, 503) against their bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopback } from '../../api/auth';
import { createSearchService } from '../../api/search-service';
import { type RunningApi, startApiServer } from '../../api/server';
import { loadDefaultEmbedder } from '../../embed/embedder';
import { logger } from '../../infra/logger';
import { observeFetch } from '../../infra/metrics';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { unpackSite } from '../../testbed/sites';
import { startTestStack, type TestStack } from '../../testbed/stack';

let stack: TestStack;
let site: SiteServer;
let api: RunningApi;
let guarded: RunningApi;
const TOKEN = 'test-token-5f1c';
const CRAWL_ID = 'api-crawl';
// Small: with the page pipeline each page is also extracted, chunked and embedded on two shared cores.
const MAX_PAGES = 10;

interface ErrorBody {
  error: string;
  message: string;
  statusCode: number;
  requestId: string;
}

async function call<T = ErrorBody & Record<string, unknown>>(
  path: string,
  init: RequestInit & { base?: string } = {},
): Promise<{ status: number; body: T; headers: Headers; text: string }> {
  const response = await fetch(`${init.base ?? api.url}${path}`, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body: body as T, headers: response.headers, text };
}

async function poll(predicate: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function postJson(path: string, body: unknown, headers: Record<string, string> = {}, base?: string) {
  return call(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ...(base ? { base } : {}),
  });
}

function expectPlainError(result: { status: number; body: unknown; text: string }, status: number) {
  expect(result.status).toBe(status);
  const body = result.body as ErrorBody;
  expect(body.statusCode).toBe(status);
  expect(typeof body.message).toBe('string');
  expect(body.requestId).toMatch(/\S/);
  // Never a stack trace.
  expect(result.text).not.toMatch(/\n\s+at |\.ts:\d+/);
}

beforeAll(async () => {
  site = await serveSite(unpackSite('skopt-0.9'));
  stack = await startTestStack();
  const deps = {
    db: stack.db,
    temporal: async () => stack.client,
    search: createSearchService(stack.db, loadDefaultEmbedder),
    // Request logs at info would bury the test report.
    logger: logger.child({}, { level: 'warn' }),
  };
  // Counts read afresh on every scrape, so the outage test sees the database go down at once.
  api = await startApiServer({ ...deps, host: '127.0.0.1', port: 0, metricsMaxAgeMs: 0 });
  guarded = await startApiServer({ ...deps, host: '127.0.0.1', port: 0, token: TOKEN, searchOpen: false });
});

afterAll(async () => {
  await guarded?.close();
  await api?.close();
  await stack?.close();
  await site?.close();
});

describe('starting and watching a crawl', () => {
  it('rejects bad crawl bodies with 400 naming the field', async () => {
    const missing = await postJson('/crawls', { maxPages: 3 });
    expectPlainError(missing, 400);
    expect((missing.body as ErrorBody).message).toContain('"seeds"');

    const bareSeed = await postJson('/crawls', { seeds: site.url });
    expectPlainError(bareSeed, 400);
    expect((bareSeed.body as ErrorBody).message).toContain('"seeds"');

    const notUrl = await postJson('/crawls', { seeds: ['ftp://example.com/'] });
    expectPlainError(notUrl, 400);
    expect((notUrl.body as ErrorBody).message).toContain('seeds.0');

    const unknown = await postJson('/crawls', { seeds: [site.url], maxPagez: 3 });
    expectPlainError(unknown, 400);
    expect((unknown.body as ErrorBody).message).toContain('"maxPagez"');

    const range = await postJson('/crawls', { seeds: [site.url], maxPages: 0 });
    expectPlainError(range, 400);
    expect((range.body as ErrorBody).message).toMatch(/maxPages.*>= 1/);

    const domains = await postJson('/crawls', { seeds: [site.url], scope: 'domains' });
    expectPlainError(domains, 400);
    expect((domains.body as ErrorBody).message).toContain('"domains"');

    // The body uses the crawl spec's own field names; a bad value of any of them is named as sent.
    const renamed: Array<[Record<string, unknown>, string]> = [
      [{ domains: [''] }, '"domains.0"'],
      [{ includePrefixes: [''] }, '"includePrefixes.0"'],
      [{ allowHosts: [''] }, '"allowHosts.0"'],
      [{ maxRequestsPerSecond: -1 }, '"maxRequestsPerSecond"'],
      // Past the JSON schema, refused by the crawl spec's own schema: still the body field's name.
      [{ maxRequestsPerSecond: 20_000 }, 'body field "maxRequestsPerSecond": '],
      [{ scope: 'domains', domains: [] }, 'body field "domains": needs at least one host'],
      // A JSON body arrives typed: a wrong type is refused, never coerced into the right one.
      [{ allowHosts: [1] }, '"allowHosts.0"'],
      [{ allowHosts: '127.0.0.1' }, '"allowHosts"'],
      [{ maxPages: '3' }, '"maxPages"'],
      [{ onlyDue: 'false' }, '"onlyDue"'],
      [{ contentTypes: ['html', 'epub'] }, '"contentTypes.1"'],
      [{ contentTypes: [] }, '"contentTypes"'],
      [{ contentTypes: 'pdf' }, '"contentTypes"'],
      [{ soft404Probe: 'yes' }, '"soft404Probe"'],
      [{ lang: ['english'] }, 'body field "lang'],
    ];
    for (const [fields, named] of renamed) {
      const answer = await postJson('/crawls', { seeds: [site.url], ...fields });
      expectPlainError(answer, 400);
      expect((answer.body as ErrorBody).message, JSON.stringify(fields)).toContain(named);
    }

    const malformed = await call('/crawls', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"seeds": [',
    });
    expectPlainError(malformed, 400);
  });

  it('starts a crawl (202), refuses the same id twice (409), and reports it finished', async () => {
    const started = await postJson('/crawls', {
      // Both seeds are fetched whatever order the budget takes the rest in; search looks for the second.
      seeds: [site.url, `${site.origin}/getting_started.html`],
      crawlId: CRAWL_ID,
      maxPages: MAX_PAGES,
      delayMs: 0,
      allowHosts: ['127.0.0.1'],
      includePrefixes: [`${site.origin}/`],
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      crawlId: CRAWL_ID,
      workflowId: `crawl-${CRAWL_ID}`,
      status: 'started',
    });
    expect(started.headers.get('location')).toBe(`/crawls/${CRAWL_ID}`);

    const again = await postJson('/crawls', { seeds: [site.url], crawlId: CRAWL_ID });
    expectPlainError(again, 409);

    const early = await call<{ status: string; progress: unknown }>(`/crawls/${CRAWL_ID}`);
    expect(early.status).toBe(200);
    expect(['running', 'completed']).toContain(early.body.status);
    if (early.body.status === 'running') {
      // Live progress from the workflow's query.
      expect(early.body.progress).toMatchObject({ crawlId: CRAWL_ID, spec: { maxPages: MAX_PAGES } });
    }

    let last: { status: string; summary: Record<string, number> | null } | undefined;
    await poll(
      async () => {
        last = (await call<{ status: string; summary: Record<string, number> | null }>(`/crawls/${CRAWL_ID}`))
          .body;
        return last.status === 'completed';
      },
      280_000,
      'the crawl to complete',
    );
    const pages = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pages WHERE crawl_id = $1',
      [CRAWL_ID],
    );
    expect(pages.rows[0]?.n).toBe(MAX_PAGES);
    expect(last?.summary?.pagesFetched).toBe(MAX_PAGES);
    // The spec the crawl ran with holds the body's fields under the same names.
    const stored = await stack.db.query<{ spec: Record<string, unknown> }>(
      'SELECT spec FROM crawls WHERE id = $1',
      [CRAWL_ID],
    );
    expect(stored.rows[0]?.spec).toMatchObject({
      allowHosts: ['127.0.0.1'],
      includePrefixes: [`${site.origin}/`],
      maxPages: MAX_PAGES,
    });

    const list = await call<{
      total: number;
      crawls: Array<{ crawlId: string; status: string; seeds: string[] }>;
    }>('/crawls?limit=10');
    expect(list.status).toBe(200);
    const listed = list.body.crawls.find((crawl) => crawl.crawlId === CRAWL_ID);
    expect(listed).toMatchObject({
      status: 'completed',
      seeds: [site.url, `${site.origin}/getting_started.html`],
    });
    expect(list.body.total).toBeGreaterThanOrEqual(1);
    expect((await call('/crawls?status=failed')).body).toMatchObject({ total: 0, crawls: [] });

    // A finished crawl's id is refused too, and its record stays as it was.
    const reused = await postJson('/crawls', { seeds: [site.url], crawlId: CRAWL_ID });
    expectPlainError(reused, 409);
    expect(JSON.stringify(reused.body)).toMatch(/already finished \(completed\)/);
    const after = await call<{ status: string; summary: Record<string, number> | null }>(
      `/crawls/${CRAWL_ID}`,
    );
    expect(after.body.status).toBe('completed');
    expect(after.body.summary?.pagesFetched).toBe(MAX_PAGES);
  }, 300_000);

  it('answers 404 for unknown crawls and 400 for malformed ids', async () => {
    expectPlainError(await call('/crawls/no-such-crawl'), 404);
    expectPlainError(await call('/crawls/bad%20id!'), 400);
    expectPlainError(await call('/crawls?limit=0'), 400);
    // Control of a crawl that is not running.
    expectPlainError(await postJson('/crawls/no-such-crawl/cancel', {}), 404);
    expectPlainError(await postJson(`/crawls/${CRAWL_ID}/explode`, {}), 400);
  });
});

describe('reading the corpus', () => {
  it('GET /pages/:id returns the page with its links both ways', async () => {
    const seed = await stack.db.query<{ id: number; url: string }>(
      'SELECT id, url FROM pages WHERE crawl_id = $1 AND url = $2',
      [CRAWL_ID, site.url],
    );
    const page = seed.rows[0];
    expect(page).toBeDefined();
    const result = await call<{
      id: number;
      url: string;
      title: string;
      crawlId: string;
      outgoingLinks: {
        total: number;
        items: Array<{ url: string; anchorText: string; pageId: number | null }>;
      };
      incomingLinks: { total: number; items: Array<{ url: string }> };
      chunks: { count: number };
      extraction: object;
    }>(`/pages/${page?.id}`);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id: page?.id, url: page?.url, crawlId: CRAWL_ID });
    expect(result.body.title).toContain('scikit-optimize');
    // The same page by URL (canonicalised: the fragment is dropped); unknown and malformed URLs fail plainly.
    const byUrl = await call<{ id: number; url: string }>(
      `/pages?url=${encodeURIComponent(`${page?.url}#top`)}&markdown=false`,
    );
    expect(byUrl.status).toBe(200);
    expect(byUrl.body).toMatchObject({ id: page?.id, url: page?.url });
    expectPlainError(await call(`/pages?url=${encodeURIComponent(`${site.origin}/no-such-page.html`)}`), 404);
    expectPlainError(await call('/pages?url=not%20a%20url'), 400);
    expectPlainError(await call('/pages'), 400);
    const outCount = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM links WHERE from_page_id = $1',
      [page?.id ?? 0],
    );
    expect(result.body.outgoingLinks.total).toBe(outCount.rows[0]?.n);
    expect(result.body.outgoingLinks.total).toBeGreaterThan(5);
    const gettingStarted = result.body.outgoingLinks.items.find(
      (link) => link.url === `${site.origin}/getting_started.html`,
    );
    expect(gettingStarted?.anchorText).toBe('Getting Started');
    expect(result.body.extraction).toBeDefined();
    expect(typeof result.body.chunks.count).toBe('number');

    // Incoming: a page the seed links to lists the seed among its referrers.
    const target = await stack.db.query<{ id: number }>('SELECT id FROM pages WHERE url = $1', [
      `${site.origin}/getting_started.html`,
    ]);
    if (target.rows[0]) {
      const incoming = await call<{ incomingLinks: { total: number; items: Array<{ url: string }> } }>(
        `/pages/${target.rows[0].id}?links=1000&markdown=false`,
      );
      expect(incoming.body.incomingLinks.items.map((link) => link.url)).toContain(page?.url);
    }

    const limited = await call<{ outgoingLinks: { total: number; items: unknown[] } }>(
      `/pages/${page?.id}?links=2`,
    );
    expect(limited.body.outgoingLinks.items).toHaveLength(2);
    expect(limited.body.outgoingLinks.total).toBe(outCount.rows[0]?.n);

    expectPlainError(await call('/pages/999999999'), 404);
    const bad = await call('/pages/abc');
    expectPlainError(bad, 400);
    expect((bad.body as ErrorBody).message).toContain('"id"');
    expectPlainError(await call(`/pages/${page?.id}?links=5000`), 400);
  });

  it('GET /graph pages through every edge of an origin exactly once', async () => {
    const expected = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM links l JOIN pages p ON p.id = l.from_page_id WHERE p.origin = $1',
      [site.origin],
    );
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/graph?origin=${encodeURIComponent(site.origin)}&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
      const result = await call<{
        origin: string;
        edges: Array<{
          fromPageId: number;
          fromUrl: string;
          toUrl: string;
          anchorText: string;
          nofollow: boolean;
        }>;
        nextCursor: string | null;
      }>(query);
      expect(result.status).toBe(200);
      expect(result.body.origin).toBe(site.origin);
      for (const edge of result.body.edges) {
        expect(edge.fromUrl.startsWith(site.origin)).toBe(true);
        expect(typeof edge.nofollow).toBe('boolean');
        seen.add(JSON.stringify([edge.fromPageId, edge.toUrl, edge.anchorText]));
      }
      cursor = result.body.nextCursor;
      pages++;
    } while (cursor && pages < 1000);
    expect(expected.rows[0]?.n).toBeGreaterThan(100);
    expect(seen.size).toBe(expected.rows[0]?.n);
    expect(pages).toBeGreaterThan(1);

    // A trailing slash is the same origin.
    expect((await call(`/graph?origin=${encodeURIComponent(`${site.origin}/`)}&limit=1`)).status).toBe(200);
    expectPlainError(await call('/graph'), 400);
    expectPlainError(await call('/graph?origin=ftp%3A%2F%2Fexample.com'), 400);
    expectPlainError(await call(`/graph?origin=${encodeURIComponent(`${site.origin}/docs/`)}`), 400);
    expectPlainError(await call(`/graph?origin=${encodeURIComponent(site.origin)}&cursor=not-a-cursor`), 400);
    expectPlainError(await call('/graph?origin=http%3A%2F%2F127.0.0.2%3A9'), 404);
  });

  it('GET /search finds the page that holds the words and rejects bad parameters', async () => {
    // The crawl stored pages; the page pipeline (extract → chunk) fills `chunks`. Until every
    // page workflow runs it, add one chunk per crawled page from its stored title so the route
    // is exercised through the real search function and SQL.
    const chunked = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');
    if ((chunked.rows[0]?.n ?? 0) === 0) {
      await stack.db.query(
        `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count)
         SELECT id, 0, md5(coalesce(title, url)), ARRAY[coalesce(title, '')], coalesce(title, ''),
                coalesce(title, url), 8
         FROM pages WHERE crawl_id = $1`,
        [CRAWL_ID],
      );
    }
    const target = await stack.db.query<{ url: string; title: string }>(
      `SELECT p.url, p.title FROM pages p WHERE p.crawl_id = $1 AND p.url = $2`,
      [CRAWL_ID, `${site.origin}/getting_started.html`],
    );
    expect(target.rows).toHaveLength(1);
    const wanted = `${site.origin}/getting_started.html`;
    const result = await call<{
      query: string;
      k: number;
      mode: string;
      hits: Array<{
        url: string;
        pageId: number;
        chunkId: number;
        score: number;
        retrievers: string[];
        text: string;
      }>;
    }>(`/search?q=${encodeURIComponent('getting started')}&k=5&crawl=${CRAWL_ID}`);
    expect(result.status).toBe(200);
    expect(result.body.k).toBe(5);
    expect(result.body.hits.length).toBeGreaterThan(0);
    expect(result.body.hits.length).toBeLessThanOrEqual(5);
    expect(result.body.hits.map((hit) => hit.url)).toContain(wanted);
    for (const hit of result.body.hits) {
      expect(hit.retrievers.length).toBeGreaterThan(0);
      expect(hit.score).toBeGreaterThan(0);
    }
    const embedded = await stack.db.query('SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT 1');
    console.info(`GET /search ran in ${result.body.mode} mode; chunks embedded: ${embedded.rows.length > 0}`);
    if (embedded.rows.length > 0) {
      // The page pipeline embedded the chunks: the query is embedded with the provisioned model too.
      expect(result.body.mode).toBe('hybrid');
      expect(result.body.hits.some((hit) => hit.retrievers.includes('vector'))).toBe(true);
      const byMeaning = await call<{ mode: string; hits: Array<{ url: string; retrievers: string[] }> }>(
        `/search?q=${encodeURIComponent('how do I install and begin using the library')}&mode=vector&k=5`,
      );
      expect(byMeaning.status).toBe(200);
      expect(byMeaning.body.mode).toBe('vector');
      expect(byMeaning.body.hits.length).toBeGreaterThan(0);
      expect(byMeaning.body.hits.every((hit) => hit.retrievers.includes('vector'))).toBe(true);
    }
    const fulltext = await call<{ mode: string; hits: unknown[] }>(
      `/search?q=${encodeURIComponent('getting started')}&mode=fulltext&domain=127.0.0.1&prefix=/`,
    );
    expect(fulltext.status).toBe(200);
    expect(fulltext.body.mode).toBe('fulltext');
    expect(fulltext.body.hits.length).toBeGreaterThan(0);
    const elsewhere = await call<{ hits: unknown[] }>('/search?q=getting+started&domain=example.org');
    expect(elsewhere.body.hits).toEqual([]);

    const missing = await call('/search');
    expectPlainError(missing, 400);
    expect((missing.body as ErrorBody).message).toContain('"q"');
    const badK = await call('/search?q=x&k=0');
    expectPlainError(badK, 400);
    expect((badK.body as ErrorBody).message).toContain('"k"');
    expectPlainError(await call('/search?q=x&k=ten'), 400);
    expectPlainError(await call('/search?q=x&k=101'), 400);
    expectPlainError(await call('/search?q=x&mode=psychic'), 400);
    const badPrefix = await call('/search?q=x&prefix=docs');
    expectPlainError(badPrefix, 400);
    // The query parameter's name, not the search function's (`pathPrefix`).
    expect((badPrefix.body as ErrorBody).message).toMatch(/^prefix must start with "\/"/);
    expectPlainError(await call('/search?q=x&crawlId=y'), 400);
  });
});

describe('operations', () => {
  it('GET /healthz says both services are up', async () => {
    const result = await call<{ status: string; database: { up: boolean }; temporal: { up: boolean } }>(
      '/healthz',
    );
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ status: 'ok', database: { up: true }, temporal: { up: true } });
  });

  it('GET /metrics is Prometheus text with corpus counts, latency histograms and queue depths', async () => {
    observeFetch(120, 'ok');
    const result = await call('/metrics');
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toContain('text/plain');
    const samples = new Map<string, number>();
    for (const line of result.text.split('\n')) {
      if (line === '' || line.startsWith('#')) {
        expect(line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)).toBe(true);
        continue;
      }
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|NaN|[+-]Inf)$/.exec(line);
      expect(match, `not a Prometheus sample line: ${line}`).not.toBeNull();
      if (match?.[1] && match[2]) samples.set(match[1], Number(match[2]));
    }
    const stored = await stack.db.query<{ n: number; indexed: number }>(
      'SELECT count(*)::int AS n, count(indexed_at)::int AS indexed FROM pages',
    );
    expect(samples.get('gleaner_pages_stored')).toBe(stored.rows[0]?.n);
    expect(samples.get('gleaner_pages_indexed')).toBe(stored.rows[0]?.indexed);
    expect(samples.get('gleaner_fetches{outcome="ok"}')).toBeGreaterThanOrEqual(MAX_PAGES);
    expect(samples.get('gleaner_fetched_bytes')).toBeGreaterThan(0);
    expect(samples.has('gleaner_robots_blocked')).toBe(true);
    expect(samples.get('gleaner_crawls{status="completed"}')).toBeGreaterThanOrEqual(1);
    expect(
      samples.get('gleaner_fetch_duration_seconds_bucket{le="0.25",outcome="ok"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(samples.has('gleaner_fetch_duration_seconds_bucket{le="0.1",outcome="ok"}')).toBe(true);
    expect(samples.has('gleaner_extract_duration_seconds_count')).toBe(true);
    expect(samples.has('gleaner_embed_duration_seconds_count')).toBe(true);
    expect(samples.get('gleaner_metrics_source_up{source="database"}')).toBe(1);
    expect(samples.get('gleaner_metrics_source_up{source="temporal"}')).toBe(1);
    expect(samples.get('gleaner_task_queue_backlog{queue="crawl",type="workflow"}')).toBeGreaterThanOrEqual(
      0,
    );
    expect(samples.get('gleaner_task_queue_pollers{queue="fetch",type="activity"}')).toBeGreaterThan(0);
    expect(
      [...samples.keys()].some((key) => key.startsWith('gleaner_api_request_duration_seconds_count')),
    ).toBe(true);
  });

  it('serves an OpenAPI document with every path, and Swagger UI', async () => {
    const result = await call<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      '/openapi.json',
    );
    expect(result.status).toBe(200);
    expect(result.body.openapi).toMatch(/^3\./);
    expect(Object.keys(result.body.paths).sort()).toEqual(
      [
        '/changes',
        '/context',
        '/crawls',
        '/crawls/{id}',
        '/crawls/{id}/{action}',
        '/graph',
        '/healthz',
        '/metrics',
        '/mcp',
        '/pages',
        '/pages/{id}',
        '/schedules',
        '/schedules/{id}',
        '/schedules/{id}/pause',
        '/schedules/{id}/trigger',
        '/schedules/{id}/unpause',
        '/search',
        '/tags',
      ].sort(),
    );
    expect(Object.keys(result.body.paths['/crawls'] ?? {}).sort()).toEqual(['get', 'post']);
    const docs = await fetch(`${api.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
  });

  it('unknown routes are a JSON 404 and every response carries a request id', async () => {
    const result = await call('/nope', { headers: { 'x-request-id': 'trace-123' } });
    expectPlainError(result, 404);
    expect(result.headers.get('x-request-id')).toBe('trace-123');
    expect((result.body as ErrorBody).requestId).toBe('trace-123');
  });
});

describe('authentication', () => {
  it('a configured token guards crawl control: 401 without it, 403 when wrong', async () => {
    const body = { seeds: [site.url], maxPages: 0 };
    const none = await postJson('/crawls', body, {}, guarded.url);
    expectPlainError(none, 401);
    expect((none.body as ErrorBody).message).toContain('Bearer');
    expectPlainError(await postJson('/crawls', body, { authorization: 'Bearer wrong' }, guarded.url), 403);
    expectPlainError(await postJson('/crawls', body, { authorization: 'Basic abc' }, guarded.url), 401);
    // The right token gets past auth to validation (maxPages 0 is invalid, so nothing starts).
    expectPlainError(await postJson('/crawls', body, { authorization: `Bearer ${TOKEN}` }, guarded.url), 400);
    expectPlainError(
      await postJson('/crawls/x/pause', {}, { authorization: 'Bearer nope' }, guarded.url),
      403,
    );
  });

  it('with search closed, reads need the token too; health, metrics and OpenAPI stay open', async () => {
    expectPlainError(await call('/search?q=optimize', { base: guarded.url }), 401);
    expectPlainError(await call('/crawls', { base: guarded.url }), 401);
    const authorised = await call('/search?q=optimize', {
      base: guarded.url,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(authorised.status).toBe(200);
    expect((await call('/healthz', { base: guarded.url })).status).toBe(200);
    expect((await call('/metrics', { base: guarded.url })).status).toBe(200);
    expect((await call('/openapi.json', { base: guarded.url })).status).toBe(200);
  });

  it('without a token, control is for loopback clients only', () => {
    // The servers above answer loopback clients (this test); a remote address is refused.
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('127.8.9.10')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('10.0.0.5')).toBe(false);
    expect(isLoopback('::ffff:192.168.1.2')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });
});

describe('unexpected failures', () => {
  it('a bug inside a route is a plain 500 with the request id, never a stack trace', async () => {
    const broken = await startApiServer({
      db: stack.db,
      temporal: async () => stack.client,
      search: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'rows')");
      },
      logger: logger.child({}, { level: 'silent' }),
      docsUi: false,
      host: '127.0.0.1',
      port: 0,
    });
    try {
      const result = await call('/search?q=anything', { base: broken.url });
      expectPlainError(result, 500);
      expect((result.body as ErrorBody).message).toContain((result.body as ErrorBody).requestId);
      expect(result.text).not.toContain('Cannot read properties');
    } finally {
      await broken.close();
    }
  });
});

describe('outages', () => {
  it('database down: /healthz and database-backed routes answer 503 plainly; /metrics still answers', async () => {
    await stack.postgres.stop();
    const health = await call<{
      status: string;
      message: string;
      database: { up: boolean; error: string };
      temporal: { up: boolean };
    }>('/healthz');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'unavailable',
      database: { up: false },
      temporal: { up: true },
    });
    expect(health.body.message).toContain('database');
    expect(health.text).not.toMatch(/\n\s+at /);

    for (const path of [
      '/pages/1',
      '/graph?origin=http%3A%2F%2F127.0.0.1%3A9',
      '/crawls',
      `/search?q=optimize`,
    ]) {
      const result = await call(path);
      expectPlainError(result, 503);
      expect((result.body as ErrorBody).message).toBe('the database is unavailable; try again later');
    }
    const metrics = await call('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('gleaner_metrics_source_up{source="database"} 0');
  });

  it('Temporal down: /healthz names it and starting a crawl answers 503', async () => {
    await stack.temporal.stop();
    const health = await call<{ status: string; temporal: { up: boolean } }>('/healthz');
    expect(health.status).toBe(503);
    expect(health.body.temporal.up).toBe(false);
    const start = await postJson('/crawls', { seeds: [site.url], crawlId: 'never-started' });
    expectPlainError(start, 503);
    expect((start.body as ErrorBody).message).toBe('Temporal is unavailable; try again later');
  });
});
