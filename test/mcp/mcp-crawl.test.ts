/**
 * The crawl tools end to end: `start_crawl`, `crawl_status` and `recrawl` of a server built with
 * allowCrawl, against the real stack (Temporal dev server, native Postgres, in-process workers) and
 * a generated site on 127.0.0.1, through the SDK's Client over its in-memory transport. The crawl
 * is the one `gleaner crawl` starts (infra/start-crawl.ts); its pages become searchable over MCP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadDefaultEmbedder } from '../../embed/embedder';
import { createMcpServer } from '../../mcp/server';
import { searchCorpus } from '../../search/hybrid-search';
import type { TextEmbedder } from '../../search/text-embedder';
import { addGeneratedPages } from '../../testbed/generated-site';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import { call, textOf } from './mcp-checks';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

const PAGES = 4;
let stack: TestStack;
let site: SiteServer;
let client: Client;
let embedder: TextEmbedder;

async function untilFinished(crawlId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const result = await call(client, 'crawl_status', { crawlId });
    const status = result.structuredContent as { status?: string } | undefined;
    if (!result.isError && status?.status && status.status !== 'running')
      return status as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`crawl ${crawlId} did not finish: ${textOf(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  [stack, embedder] = await Promise.all([startTestStack(), loadDefaultEmbedder()]);
  site = await serveSite(undefined);
  addGeneratedPages(site, PAGES);
  const server = createMcpServer({
    db: stack.db,
    search: (params) => searchCorpus(stack.db, embedder, params),
    temporal: async () => stack.client,
    allowCrawl: true,
    crawlAllowHosts: ['127.0.0.1'],
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'gleaner-test', version: '1.0.0' });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await site?.close();
  await stack?.close();
});

describe('start_crawl, crawl_status and recrawl', () => {
  it('starts a crawl whose pages become searchable, and reports it while it runs and once done', async () => {
    const started = await call(client, 'start_crawl', {
      urls: [site.url],
      maxPages: PAGES,
      crawlId: 'mcp-start',
    });
    expect(started.isError, textOf(started)).toBeFalsy();
    expect(started.structuredContent).toMatchObject({ crawlId: 'mcp-start' });
    expect(textOf(started)).toContain('crawl_status {"crawlId": "mcp-start"}');

    const early = await call(client, 'crawl_status', { crawlId: 'mcp-start' });
    expect(early.isError, textOf(early)).toBeFalsy();
    expect(textOf(early)).toContain('Crawl mcp-start');
    // While it runs, the workflow's own progress query answers beside the stored figures.
    const earlyStatus = early.structuredContent as { status?: string; progress: unknown };
    if (earlyStatus.status === 'running') {
      expect(earlyStatus.progress).toMatchObject({ crawlId: 'mcp-start' });
      expect(textOf(early)).toContain('Live: phase');
    }

    const finished = await untilFinished('mcp-start');
    expect(finished).toMatchObject({ status: 'completed', pagesIndexed: PAGES });

    const sources = await call(client, 'list_sources', {});
    expect(sources.structuredContent).toMatchObject({ origins: [{ origin: site.origin, pages: PAGES }] });
    const found = await call(client, 'search', { query: 'Page 2', k: 3 });
    expect(found.isError, textOf(found)).toBeFalsy();
    expect(textOf(found)).toContain(`URL: ${site.origin}/`);
  });

  it('refuses to start a finished crawl id again, with the reason', async () => {
    const again = await call(client, 'start_crawl', { urls: [site.url], crawlId: 'mcp-start' });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain('crawl mcp-start has already finished');
  });

  it('recrawls an earlier crawl under a new id: every page revisited, none changed', async () => {
    const recrawl = await call(client, 'recrawl', { crawlId: 'mcp-start' });
    expect(recrawl.isError, textOf(recrawl)).toBeFalsy();
    const { crawlId } = recrawl.structuredContent as { crawlId: string };
    expect(crawlId).not.toBe('mcp-start');
    const finished = await untilFinished(crawlId);
    expect(finished.status).toBe('completed');
    expect(finished.summary).toMatchObject({ pagesUnchanged: PAGES, pagesChanged: 0, pagesNew: 0 });
  });
});
