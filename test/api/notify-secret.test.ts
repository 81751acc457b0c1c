/**
 * `notify` on an API whose own workers deliver webhooks (`gleaner api` and `gleaner dev` on the
 * embedded default): without GLEANER_WEBHOOK_SECRET in its environment nothing could be signed, so
 * a crawl or schedule asking for webhooks is refused up front, as `gleaner crawl --notify` is.
 * Before, POST /crawls answered 202 and every delivery waited for a secret that process never gets.
 * The routes run on an embedded store with `app.inject()`; Temporal is down, so a request the check
 * lets through answers 503 from the Temporal call that follows it.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TemporalUnavailableError } from '../../api/errors';
import { buildApiServer } from '../../api/server';
import { WEBHOOK_SECRET_ENV } from '../../domain/webhook-events';
import { logger } from '../../infra/logger';
import { type LoopbackStore, openLoopbackStore } from '../../testbed/loopback-store';

let store: LoopbackStore;
const apps: FastifyInstance[] = [];
const savedSecret = process.env[WEBHOOK_SECRET_ENV];

async function api(deliversWebhooks: boolean): Promise<FastifyInstance> {
  const app = await buildApiServer({
    db: store.db,
    temporal: async () => {
      throw new TemporalUnavailableError('no Temporal in this test');
    },
    logger: logger.child({}, { level: 'silent' }),
    docsUi: false,
    deliversWebhooks,
  });
  apps.push(app);
  return app;
}

const crawlBody = () => ({
  seeds: [`${store.site.origin}/`],
  allowHosts: ['127.0.0.1'],
  notify: ['http://127.0.0.1:9/hook'],
});

async function post(app: FastifyInstance, url: string, body: unknown) {
  const response = await app.inject({ method: 'POST', url, payload: body as object });
  return { status: response.statusCode, body: response.json() as { message: string } };
}

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-notify-secret-');
}, 120_000);

afterEach(() => {
  if (savedSecret === undefined) delete process.env[WEBHOOK_SECRET_ENV];
  else process.env[WEBHOOK_SECRET_ENV] = savedSecret;
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await store?.close();
});

describe('notify on an API whose own workers deliver webhooks', () => {
  it('is refused with 400 naming the field and the variable while no secret is set', async () => {
    delete process.env[WEBHOOK_SECRET_ENV];
    const app = await api(true);
    const crawl = await post(app, '/crawls', crawlBody());
    expect(crawl.status).toBe(400);
    expect(crawl.body.message).toMatch(
      /^body field "notify": set GLEANER_WEBHOOK_SECRET where this API runs/,
    );
    const schedule = await post(app, '/schedules', { ...crawlBody(), every: '1d', id: 'hooks' });
    expect(schedule.status).toBe(400);
    expect(schedule.body.message).toMatch(/^body field "notify": set GLEANER_WEBHOOK_SECRET/);
    // A crawl without receivers needs no secret: it goes on to Temporal (down here).
    const { notify: _none, ...plain } = crawlBody();
    expect((await post(app, '/crawls', plain)).status).toBe(503);
  });

  it('goes on to start the crawl once the secret is set', async () => {
    process.env[WEBHOOK_SECRET_ENV] = 'test-secret';
    const app = await api(true);
    expect((await post(app, '/crawls', crawlBody())).status).toBe(503);
  });

  it('is not refused by an API whose workers run elsewhere (they hold the secret)', async () => {
    delete process.env[WEBHOOK_SECRET_ENV];
    const app = await api(false);
    expect((await post(app, '/crawls', crawlBody())).status).toBe(503);
  });
});
