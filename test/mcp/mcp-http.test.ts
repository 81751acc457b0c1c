/**
 * The MCP server over streamable HTTP at `/mcp` on the real API (Fastify listening on 127.0.0.1),
 * behind the API token, driven by the SDK's own Client and StreamableHTTPClientTransport; the store
 * is an in-process PGlite holding the corpus of mcp-corpus.ts. No Temporal: the read tools must not
 * need it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSearchService } from '../../api/search-service';
import { type RunningApi, startApiServer } from '../../api/server';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { loadDefaultEmbedder } from '../../embed/embedder';
import { call, defineToolChecks, textOf } from './mcp-checks';
import { CRAWL_ID, loadMcpCorpus } from './mcp-corpus';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

const TOKEN = 'mcp-test-token-8d2e';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

let home: string;
let db: PgliteDatabase;
let api: RunningApi;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-mcp-http-'));
  db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  await migrate(db);
  const embedder = await loadDefaultEmbedder();
  await loadMcpCorpus(db, embedder);
  api = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    db,
    temporal: () => Promise.reject(new Error('no Temporal in this test')),
    search: createSearchService(db, async () => embedder),
    token: TOKEN,
    searchOpen: true,
    docsUi: false,
  });
});

afterAll(async () => {
  await api?.close();
  await db?.close();
  rmSync(home, { recursive: true, force: true });
});

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

describe('POST /mcp with the API token', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'gleaner-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
  });
  afterAll(async () => {
    await client?.close();
  });

  defineToolChecks(() => client);
});

describe('the API rules around /mcp', () => {
  it('answers 401 without the token and 403 with a wrong one, even though reads are open', async () => {
    const missing = await post(INITIALIZE);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { message: string }).message).toContain('Authorization: Bearer');
    const wrong = await post(INITIALIZE, { authorization: 'Bearer not-the-token' });
    expect(wrong.status).toBe(403);
    // The SDK's client surfaces the refusal instead of hanging.
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`))),
    ).rejects.toThrow(/401|Unauthorized|Bearer/);
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin like every other route', async () => {
    // fetch() sets Host itself; undici's request sends the one given, as a rebinding browser would.
    const rebound = await request(`${api.url}/mcp`, {
      method: 'POST',
      headers: {
        host: 'evil.example',
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(INITIALIZE),
    });
    await rebound.body.text();
    expect(rebound.statusCode).toBe(421);
    const crossSite = await post(INITIALIZE, {
      authorization: `Bearer ${TOKEN}`,
      origin: 'http://evil.example',
    });
    expect(crossSite.status).toBe(403);
  });

  it('answers a raw initialize in JSON, statelessly (no session id)', async () => {
    const response = await post(INITIALIZE, { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    // Like every response of the API, for matching the server's log.
    expect(response.headers.get('x-request-id')).toMatch(/\S/);
    const body = (await response.json()) as { result: { serverInfo: { name: string } } };
    expect(body.result.serverInfo.name).toBe('gleaner');
  });

  it('answers a malformed body with a JSON-RPC Parse error (-32700) and 400, as stdio does', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": ', '']) {
      const response = await fetch(`${api.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      const reply = (await response.json()) as {
        jsonrpc: string;
        id: unknown;
        error: { code: number; message: string };
      };
      expect(reply).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      expect(reply.error.message).toMatch(/^Parse error/);
    }
  });

  it('answers JSON that is no JSON-RPC message with Invalid Request (-32600) and its id', async () => {
    const response = await post({ hello: 'not JSON-RPC', id: 7 }, { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(400);
    const reply = (await response.json()) as {
      jsonrpc: string;
      id: unknown;
      error: { code: number; message: string };
    };
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
    expect(reply.error.message).toMatch(/^Invalid Request/);
    // An empty batch is one too (JSON-RPC 2.0), as `[]` is on stdio: before, a 202 as if taken.
    const empty = await post([], { authorization: `Bearer ${TOKEN}` });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('answers a tools/call whose params do not fit with Invalid params (-32602) naming the field', async () => {
    const response = await post(
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'search', arguments: 'gaussian' } },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(response.status).toBe(200);
    const reply = (await response.json()) as { id: unknown; error: { code: number; message: string } };
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32602 } });
    expect(reply.error.message).toMatch(/^Invalid params: params\.arguments: /);
  });

  it('answers GET and DELETE /mcp with 405: there is no session stream', async () => {
    const response = await fetch(`${api.url}/mcp`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('POST /mcp with GLEANER_MCP_ALLOW_CRAWL', () => {
  let allowing: RunningApi;
  beforeAll(async () => {
    process.env.GLEANER_MCP_ALLOW_CRAWL = '1';
    try {
      allowing = await startApiServer({
        host: '127.0.0.1',
        port: 0,
        db,
        temporal: () => Promise.reject(new Error('Temporal is down in this test')),
        token: TOKEN,
        docsUi: false,
      });
    } finally {
      delete process.env.GLEANER_MCP_ALLOW_CRAWL;
    }
  });
  afterAll(async () => {
    await allowing?.close();
  });

  it('offers start_crawl and recrawl, and reports a Temporal outage as a tool error', async () => {
    const client = new Client({ name: 'gleaner-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${allowing.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['start_crawl', 'recrawl']));
      const started = await call(client, 'start_crawl', { urls: ['http://127.0.0.1:9/'] });
      expect(started.isError).toBe(true);
      expect(textOf(started)).toContain(
        'cannot reach Temporal to start the crawl: Temporal is down in this test',
      );
      const recrawl = await call(client, 'recrawl', { crawlId: CRAWL_ID });
      expect(recrawl.isError).toBe(true);
      expect(textOf(recrawl)).toContain('cannot reach Temporal');
      // Without search configured on this API, search says so instead of failing the protocol.
      const search = await call(client, 'search', { query: 'gaussian' });
      expect(search.isError).toBe(true);
      expect(textOf(search)).toContain('search is not configured');
    } finally {
      await client.close();
    }
  });
});
