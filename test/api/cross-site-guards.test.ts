/**
 * The doors a web page in a browser on this machine could use (issue 28): DNS rebinding (a foreign
 * Host header) and cross-site POSTs (no body, a "simple" content type, a foreign Origin). Each case
 * runs through `app.inject()` and through a real `listen()` on 127.0.0.1, against a real Postgres
 * and Temporal dev server, and checks what really happened: no crawl was started.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAllowedHost } from '../../api/cross-site-guards';
import { API_ERROR_CODES } from '../../api/errors';
import { buildApiServer, type RunningApi, startApiServer } from '../../api/server';
import { parseAuthority } from '../../domain/host-authority';
import { crawlWorkflowId } from '../../domain/temporal-names';
import { logger } from '../../infra/logger';
import { startTestStack, type TestStack } from '../../testbed/stack';

let stack: TestStack;
let app: FastifyInstance;
let api: RunningApi;
let port: number;

interface Answer {
  status: number;
  body: { code?: string; message?: string; [key: string]: unknown };
}

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  host?: string;
  headers?: Record<string, string>;
  body?: string;
}

type Transport = (call: Call) => Promise<Answer>;

const transports: Array<[string, Transport]> = [
  [
    'inject',
    async ({ method, path, host, headers = {}, body }) => {
      const response = await app.inject({
        method,
        url: path,
        headers: { host: host ?? 'localhost', ...headers },
        ...(body !== undefined ? { payload: body } : {}),
      });
      return { status: response.statusCode, body: response.body ? response.json() : {} };
    },
  ],
  [
    'listen',
    async ({ method, path, host, headers = {}, body }) => {
      const response = await request(`${api.url}${path}`, {
        method,
        headers: { ...(host ? { host } : {}), ...headers },
        ...(body !== undefined ? { body } : {}),
      });
      const text = await response.body.text();
      return { status: response.statusCode, body: text ? JSON.parse(text) : {} };
    },
  ],
];

const json = { 'content-type': 'application/json' };

async function crawlExists(crawlId: string): Promise<boolean> {
  try {
    await stack.client.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

beforeAll(async () => {
  // No workers: a crawl started here stays open, which is all the tests need to see.
  stack = await startTestStack({ workers: false });
  const deps = {
    db: stack.db,
    temporal: async () => stack.client,
    logger: logger.child({}, { level: 'silent' }),
    docsUi: false,
    allowedHosts: ['gleaner.internal'],
  };
  app = await buildApiServer(deps);
  api = await startApiServer({ ...deps, host: '127.0.0.1', port: 0 });
  port = Number(new URL(api.url).port);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await app?.close();
  await stack?.close();
});

describe('Host names', () => {
  it('parses Host headers and allows loopback names and configured ones only', () => {
    expect(parseAuthority('[::1]:8700')).toEqual({ name: '::1', port: '8700' });
    expect(parseAuthority('LocalHost.')).toEqual({ name: 'localhost' });
    for (const host of ['localhost', 'localhost:8700', '127.0.0.1', '127.8.9.10:80', '[::1]', '[::1]:1']) {
      expect(isAllowedHost(host, []), host).toBe(true);
    }
    for (const host of [
      'evil.example',
      'evil.example:8700',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '',
    ]) {
      expect(isAllowedHost(host, []), host).toBe(false);
    }
    expect(isAllowedHost('gleaner.internal:8700', ['gleaner.internal'])).toBe(true);
    expect(isAllowedHost('gleaner.internal:9999', ['gleaner.internal:8700'])).toBe(false);
  });
});

describe.each(transports)('through %s', (name, send) => {
  it('refuses a rebinding page: a foreign Host starts no crawl and reads nothing (421)', async () => {
    const crawlId = `rebound-${name}`;
    const start = await send({
      method: 'POST',
      path: '/crawls',
      host: `evil.example:${port}`,
      headers: json,
      body: JSON.stringify({ seeds: ['http://10.20.30.40/'], allowHosts: ['10.20.30.40'], crawlId }),
    });
    expect(start.status).toBe(421);
    expect(start.body.code).toBe(API_ERROR_CODES.hostNotAllowed);
    expect(start.body.message).toContain('GLEANER_API_HOSTS');
    expect(await crawlExists(crawlId)).toBe(false);

    for (const path of ['/pages?url=http%3A%2F%2F10.20.30.40%2F', '/crawls', '/metrics', '/healthz']) {
      const read = await send({ method: 'GET', path, host: 'evil.example' });
      expect(read.status, path).toBe(421);
      expect(read.body.code).toBe(API_ERROR_CODES.hostNotAllowed);
    }
  });

  it('refuses control POSTs a form or a no-cors fetch can send: no body, text/plain, form (415)', async () => {
    const crawlId = `cross-site-${name}`;
    const cases: Array<Pick<Call, 'headers' | 'body'>> = [
      {},
      { headers: { 'content-type': 'text/plain' }, body: '{}' },
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b' },
      { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' },
    ];
    for (const [index, extra] of cases.entries()) {
      const cancel = await send({ method: 'POST', path: '/crawls/no-such-crawl/cancel', ...extra });
      expect(cancel.status, `case ${index}`).toBe(415);
      expect(cancel.body.code).toBe(API_ERROR_CODES.jsonBodyRequired);
      const start = await send({
        method: 'POST',
        path: '/crawls',
        ...extra,
        ...(extra.body ? { body: `{"seeds":["http://127.0.0.1:9/"],"crawlId":"${crawlId}"}` } : {}),
      });
      expect(start.status, `case ${index}`).toBe(415);
    }
    expect(await crawlExists(crawlId)).toBe(false);
  });

  it('refuses a state change from another origin (403), JSON or not', async () => {
    const crawlId = `foreign-origin-${name}`;
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${port}`,
      'null',
      `http://localhost:${port + 1}`,
    ]) {
      const start = await send({
        method: 'POST',
        path: '/crawls',
        headers: { ...json, origin },
        body: JSON.stringify({ seeds: ['http://127.0.0.1:9/'], crawlId }),
      });
      expect(start.status, origin).toBe(403);
      expect(start.body.code).toBe(API_ERROR_CODES.originNotAllowed);
    }
    const remove = await send({
      method: 'DELETE',
      path: '/schedules/x',
      headers: { origin: 'http://evil.example' },
    });
    expect(remove.status).toBe(403);
    expect(await crawlExists(crawlId)).toBe(false);
  });

  it('serves loopback and configured Host names with JSON bodies, with or without a same-origin Origin', async () => {
    const crawlId = `welcome-${name}`;
    const host = `127.0.0.1:${port}`;
    const start = await send({
      method: 'POST',
      path: '/crawls',
      host,
      headers: { ...json, origin: `http://${host}` },
      body: JSON.stringify({ seeds: ['http://127.0.0.1:9/'], crawlId, maxPages: 1 }),
    });
    expect(start.status, JSON.stringify(start.body)).toBe(202);
    expect(await crawlExists(crawlId)).toBe(true);
    // No Origin (curl, the CLI's scripts) and an empty JSON object as the body.
    const cancel = await send({
      method: 'POST',
      path: `/crawls/${crawlId}/cancel`,
      host: `[::1]:${port}`,
      headers: json,
      body: '{}',
    });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(202);
    // DELETE always needs a browser preflight: no body is fine.
    const remove = await send({ method: 'DELETE', path: '/schedules/no-such-schedule', host: 'localhost' });
    expect(remove.status).toBe(404);
    for (const readHost of [
      'localhost',
      `localhost:${port}`,
      'gleaner.internal',
      `gleaner.internal:${port}`,
    ]) {
      const read = await send({ method: 'GET', path: '/crawls?limit=5', host: readHost });
      expect(read.status, readHost).toBe(200);
    }
    const page = await send({ method: 'GET', path: '/pages?url=http%3A%2F%2F127.0.0.1%3A9%2F', host });
    expect(page.status).toBe(404);
  });
});

describe('documentation', () => {
  it('documents every stable error code in api/README.md', () => {
    const readme = readFileSync(join(__dirname, '../../api/README.md'), 'utf8');
    for (const code of Object.values(API_ERROR_CODES)) {
      expect(readme.includes(`\`${code}\``), `${code} is not in api/README.md`).toBe(true);
    }
  });
});
