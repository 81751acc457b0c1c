/**
 * Pause, resume and cancel take `origin` and `reason`, and a schedule trigger `overlap`, in the query
 * string or in the JSON body every control request must send. Before, the body was never read: a
 * pause sent as `{"origin": "…"}` paused the whole crawl, and a misspelt field passed unnoticed. The
 * routes run on an embedded store with `app.inject()`; Temporal is down, so a request the routes
 * accept answers 503 from the Temporal call that follows its checks.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalUnavailableError } from '../../api/errors';
import { buildApiServer } from '../../api/server';
import { logger } from '../../infra/logger';
import { type LoopbackStore, openLoopbackStore } from '../../testbed/loopback-store';

let store: LoopbackStore;
let app: FastifyInstance;

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-control-parameters-');
  app = await buildApiServer({
    db: store.db,
    temporal: async () => {
      throw new TemporalUnavailableError('no Temporal in this test');
    },
    logger: logger.child({}, { level: 'silent' }),
    docsUi: false,
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await store?.close();
});

async function post(url: string, body: unknown) {
  const response = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: response.statusCode, message: (response.json() as { message: string }).message };
}

describe('crawl control parameters in the JSON body', () => {
  it('reads origin and reason from the body, checked as in the query string', async () => {
    const badOrigin = await post('/crawls/c1/pause', { origin: 'not an origin' });
    expect(badOrigin.status).toBe(400);
    expect(badOrigin.message).toBe('body field "origin" is not an http(s) origin: "not an origin"');
    const longReason = await post('/crawls/c1/cancel', { reason: 'r'.repeat(1001) });
    expect(longReason.status).toBe(400);
    expect(longReason.message).toMatch(/^body field "reason" must NOT have more than 1000 characters/);
    // Well formed: on to Temporal.
    expect((await post('/crawls/c1/pause', { origin: 'http://127.0.0.1:8000' })).status).toBe(503);
    expect((await post('/crawls/c1/cancel', { reason: 'enough' })).status).toBe(503);
    expect((await post('/crawls/c1/resume', {})).status).toBe(503);
  });

  it('refuses a field it does not take, and an origin given twice differently', async () => {
    const unknown = await post('/crawls/c1/pause', { orgin: 'http://127.0.0.1:8000' });
    expect(unknown.status).toBe(400);
    expect(unknown.message).toBe('unknown body field "orgin"');
    const twice = await post('/crawls/c1/pause?origin=http://127.0.0.1:8000', {
      origin: 'http://127.0.0.1:9000',
    });
    expect(twice.status).toBe(400);
    expect(twice.message).toMatch(/^"origin" is given twice, differently/);
    // The same value in both places is no conflict.
    const same = await post('/crawls/c1/pause?origin=http://127.0.0.1:8000', {
      origin: 'http://127.0.0.1:8000',
    });
    expect(same.status).toBe(503);
  });

  it("reads a trigger's overlap from the body, and refuses other fields", async () => {
    const badOverlap = await post('/schedules/docs/trigger', { overlap: 'sometimes' });
    expect(badOverlap.status).toBe(400);
    expect(badOverlap.message).toMatch(/^body field "overlap" must be equal to one of the allowed values/);
    const unknown = await post('/schedules/docs/trigger', { overlapp: 'skip' });
    expect(unknown.status).toBe(400);
    expect(unknown.message).toBe('unknown body field "overlapp"');
    expect((await post('/schedules/docs/trigger', { overlap: 'buffer-one' })).status).toBe(503);
  });
});
