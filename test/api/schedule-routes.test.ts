/**
 * The schedule routes over real HTTP on loopback, against a real Temporal dev server, Postgres and
 * workers: a schedule created with `POST /schedules` is a Temporal Schedule, can be read, paused,
 * unpaused, triggered (the crawl it starts runs to its summary, readable at `/crawls/<id>`) and
 * deleted; bad input is a 400 naming the problem, unknown ids 404, duplicates 409, and the
 * routes follow the same auth rules as starting crawls.
 */
import type { ScheduleDescription } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApi, startApiServer } from '../../api/server';
import { CRAWL_WORKFLOW_START, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { logger } from '../../infra/logger';
import { addGeneratedPages } from '../../testbed/generated-site';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let site: SiteServer;
let api: RunningApi;
let guarded: RunningApi;
const TOKEN = 'schedule-token-9a1e';
const PAGES = 3;

interface Answer {
  status: number;
  body: Record<string, unknown> & { message?: string };
  headers: Headers;
}

async function call(path: string, init: RequestInit & { base?: string } = {}): Promise<Answer> {
  const response = await fetch(`${init.base ?? api.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

// Every POST carries a JSON body, `{}` when there is nothing to say (the API refuses others: 415).
const post = (path: string, body: unknown = {}, headers: Record<string, string> = {}, base?: string) =>
  call(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ...(base ? { base } : {}),
  });

beforeAll(async () => {
  site = await serveSite(undefined);
  addGeneratedPages(site, PAGES);
  stack = await startTestStack();
  const deps = {
    db: stack.db,
    temporal: async () => stack.client,
    logger: logger.child({}, { level: 'warn' }),
  };
  api = await startApiServer({ ...deps, host: '127.0.0.1', port: 0 });
  guarded = await startApiServer({ ...deps, host: '127.0.0.1', port: 0, token: TOKEN, searchOpen: false });
});

afterAll(async () => {
  await guarded?.close();
  await api?.close();
  await stack?.close();
  await site?.close();
});

describe('schedule routes', () => {
  it('rejects bad schedule bodies with 400 saying what is wrong', async () => {
    const base = { seeds: [site.url] };
    const cases: Array<[unknown, RegExp]> = [
      [{ every: '1h' }, /missing body field "seeds"/],
      // The body's field names, not the command line's flags.
      [base, /^a schedule needs every DURATION .* or cron EXPR/],
      [{ ...base, every: '5' }, /^every "5" is not a duration/],
      [{ ...base, every: '500ms' }, /^every "500ms" is shorter than Temporal's minimum/],
      [{ ...base, cron: 'every day' }, /^cron "every day" needs 5 fields/],
      [{ ...base, every: '1h', cron: '0 3 * * *' }, /either every or cron, not both/],
      [{ ...base, cron: '61 * * * *' }, /Temporal refused the schedule: .*[Mm]inute/],
      [{ ...base, every: '1h', id: 'no spaces' }, /body field "id" must match pattern/],
      [
        { ...base, every: '1h', overlap: 'sometimes' },
        /body field "overlap" must be equal to one of the allowed values/,
      ],
      [{ ...base, every: '1h', maxPagez: 3 }, /unknown body field "maxPagez"/],
      [{ seeds: ['ftp://example.com/'], every: '1h' }, /seeds\.0/],
      [{ ...base, every: '1h', catchupWindow: '1s' }, /catch-up window must be at least 10s/],
    ];
    for (const [body, message] of cases) {
      const answer = await post('/schedules', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await call('/schedules')).body.schedules).toEqual([]);
  });

  it('creates, reads, pauses, unpauses, triggers and deletes a schedule', async () => {
    const created = await post('/schedules', {
      seeds: [site.url],
      every: '1h',
      id: 'api-hourly',
      jitter: '30s',
      catchupWindow: '10m',
      delayMs: 0,
      allowHosts: ['127.0.0.1'],
      maxPages: 10,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/schedules/api-hourly');
    expect(created.body).toMatchObject({
      scheduleId: 'api-hourly',
      cadence: 'every 1h',
      overlap: 'skip',
      jitterMs: 30_000,
      catchupWindowMs: 600_000,
      paused: false,
      seeds: [site.url],
      crawl: { seeds: [site.url], delayMs: 0, maxPages: 10, allowHosts: ['127.0.0.1'] },
    });
    expect(created.body.crawl).not.toHaveProperty('crawlId');

    // A real Temporal Schedule, starting crawlWorkflow on the crawl queue.
    const temporal: ScheduleDescription = await stack.client.schedule.getHandle('api-hourly').describe();
    expect(temporal.action).toMatchObject({
      workflowType: 'crawlWorkflow',
      taskQueue: 'gleaner-crawl-coordinator',
      workflowId: 'crawl-api-hourly',
    });
    expect(temporal.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 600_000 });
    expect(temporal.spec.intervals).toMatchObject([{ every: 3_600_000 }]);

    const duplicate = await post('/schedules', { seeds: [site.url], cron: '0 3 * * *', id: 'api-hourly' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.message).toBe('a schedule with id api-hourly already exists');

    const deadline = Date.now() + 20_000;
    let listed = await call('/schedules');
    while ((listed.body.schedules as unknown[]).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      listed = await call('/schedules');
    }
    expect(listed.body.schedules).toMatchObject([
      { scheduleId: 'api-hourly', cadence: 'every 1h', seeds: [site.url] },
    ]);

    const paused = await post('/schedules/api-hourly/pause', { note: 'maintenance' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, note: 'maintenance' });
    expect((await stack.client.schedule.getHandle('api-hourly').describe()).state.paused).toBe(true);
    const unpaused = await post('/schedules/api-hourly/unpause');
    expect(unpaused.status).toBe(200);
    expect(unpaused.body.paused).toBe(false);

    const triggered = await post('/schedules/api-hourly/trigger');
    expect(triggered.status).toBe(202);
    const crawlId = triggered.body.crawlId as string;
    expect(crawlId).toMatch(/^api-hourly-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(triggered.body).toMatchObject({
      workflowId: `crawl-${crawlId}`,
      progressUrl: `/crawls/${encodeURIComponent(crawlId)}`,
    });
    const summary = (await stack.client.workflow.getHandle(`crawl-${crawlId}`).result()) as CrawlSummary;
    expect(summary).toMatchObject({ crawlId, status: 'completed', pagesFetched: PAGES });
    const progress = await call(triggered.body.progressUrl as string);
    expect(progress.status).toBe(200);
    expect(progress.body).toMatchObject({ crawlId, status: 'completed' });
    const described = await call('/schedules/api-hourly');
    expect(described.status).toBe(200);
    expect(described.body.actionsTaken).toBe(1);
    expect(described.body.recentRuns).toMatchObject([{ crawlId, workflowId: `crawl-${crawlId}` }]);

    const deleted = await call('/schedules/api-hourly', { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    const gone = await call('/schedules/api-hourly');
    expect(gone.status).toBe(404);
    expect(gone.body.message).toBe('no schedule with id api-hourly');
  });

  it('skips a trigger while a crawl of the schedule still runs (skip policy): 409', async () => {
    const created = await post('/schedules', {
      seeds: [site.url],
      every: '1h',
      id: 'slow',
      paused: true,
      // Three pages three seconds apart: the first crawl is still running at the second trigger.
      delayMs: 3_000,
      allowHosts: ['127.0.0.1'],
    });
    expect(created.status).toBe(201);
    const first = await post('/schedules/slow/trigger');
    expect(first.status).toBe(202);
    // A trigger in the same second would name the same crawl; the next second is a new one.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const second = await post('/schedules/slow/trigger');
    expect(second.status).toBe(409);
    expect(second.body.message).toMatch(
      new RegExp(
        `trigger skipped by the schedule's overlap policy \\(skip\\): crawl ${first.body.crawlId} is still running`,
      ),
    );
    const described = await call('/schedules/slow');
    expect(described.body).toMatchObject({
      actionsTaken: 1,
      skippedOverlap: 1,
      runningCrawls: [first.body.crawlId],
    });
    await stack.client.workflow.getHandle(first.body.workflowId as string).cancel();
    expect((await call('/schedules/slow', { method: 'DELETE' })).status).toBe(204);
  });

  it("gives a trigger startCrawl's checks: a finished crawl id or a spec gleaner refuses starts nothing", async () => {
    // A crawl id already finished in the store, for every second the trigger may name.
    const created = await post('/schedules', { seeds: [site.url], every: '1h', id: 'taken', paused: true });
    expect(created.status).toBe(201);
    const now = Math.floor(Date.now() / 1000);
    const ids = Array.from(
      { length: 120 },
      (_, i) => `taken-${new Date((now + i) * 1000).toISOString().replace('.000Z', 'Z')}`,
    );
    await stack.db.query(
      `INSERT INTO crawls (id, spec, status, finished_at)
       SELECT id, '{}'::jsonb, 'completed', now() FROM unnest($1::text[]) AS id`,
      [ids],
    );
    try {
      const refused = await post('/schedules/taken/trigger');
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/^crawl taken-\S+ has already finished \(completed\)/);
      expect((await call('/schedules/taken')).body).toMatchObject({ actionsTaken: 0, recentRuns: [] });
    } finally {
      await stack.db.query('DELETE FROM crawls WHERE id = ANY($1::text[])', [ids]);
      await call('/schedules/taken', { method: 'DELETE' });
    }

    // Made by hand with a spec crawlWorkflow would refuse: said before anything starts.
    await stack.client.schedule.create({
      scheduleId: 'by-hand',
      spec: { intervals: [{ every: '1h' }] },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPES.crawl,
        ...CRAWL_WORKFLOW_START,
        workflowId: 'crawl-by-hand',
        args: [{ seeds: ['ftp://example.org/'] }],
      },
      state: { paused: true },
    });
    try {
      const bad = await post('/schedules/by-hand/trigger');
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(
        /^schedule by-hand starts a crawl gleaner refuses \(seeds\.0: not a valid http\(s\) URL: ftp:\/\/example\.org\/\)/,
      );
      expect((await call('/schedules/by-hand')).body).toMatchObject({ actionsTaken: 0 });
    } finally {
      await call('/schedules/by-hand', { method: 'DELETE' });
    }
  });

  it('answers 404 for unknown schedules and 400 for malformed ids', async () => {
    for (const [method, path] of [
      ['GET', '/schedules/nope'],
      ['POST', '/schedules/nope/pause'],
      ['POST', '/schedules/nope/unpause'],
      ['POST', '/schedules/nope/trigger'],
      ['DELETE', '/schedules/nope'],
    ] as const) {
      const answer = method === 'POST' ? await post(path) : await call(path, { method });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.message, `${method} ${path}`).toBe('no schedule with id nope');
    }
    const malformed = await call('/schedules/bad%20id');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/path parameter "id"/);
  });

  it('needs the token to create or steer, and to read when reads are closed', async () => {
    const body = { seeds: [site.url], every: '1h', id: 'guarded' };
    expect((await post('/schedules', body, {}, guarded.url)).status).toBe(401);
    expect((await post('/schedules', body, { authorization: 'Bearer wrong' }, guarded.url)).status).toBe(403);
    expect((await call('/schedules', { base: guarded.url })).status).toBe(401);
    expect((await call('/schedules/guarded', { method: 'DELETE', base: guarded.url })).status).toBe(401);
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await post('/schedules', body, auth, guarded.url)).status).toBe(201);
    expect((await call('/schedules/guarded', { base: guarded.url, headers: auth })).status).toBe(200);
    expect((await post('/schedules/guarded/pause', undefined, auth, guarded.url)).status).toBe(200);
    expect(
      (await call('/schedules/guarded', { method: 'DELETE', base: guarded.url, headers: auth })).status,
    ).toBe(204);
  });

  it('documents the schedule routes in the OpenAPI document', async () => {
    const doc = (await call('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/schedules'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/schedules/{id}'] ?? {}).sort()).toEqual(['delete', 'get']);
    for (const action of ['pause', 'unpause', 'trigger'])
      expect(doc.paths[`/schedules/{id}/${action}`]).toHaveProperty('post');
  });
});
