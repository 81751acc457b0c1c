/**
 * Operators steer running crawls: `gleaner pause` stops all requests (proven from the server
 * log) until `gleaner resume`; `gleaner cancel` ends a crawl early as `cancelled`. Pages that say
 * noindex are stored but not indexed; X-Robots-Tag nofollow keeps links in the graph unfollowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { addGeneratedPages, pageHtml } from '../../testbed/generated-site';
import { runGleaner, waitFor } from '../../testbed/gleaner-process';
import { isProtocolFile, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import { type CrawlSummary, crawlProgressQuery } from '../../workflows/messages';

let stack: TestStack;
let env: Record<string, string>;
const sites: SiteServer[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
});
afterAll(async () => {
  await stack?.close();
  for (const site of sites) await site.close();
});

async function site(pages: number): Promise<SiteServer> {
  const server = await serveSite(undefined);
  addGeneratedPages(server, pages);
  sites.push(server);
  return server;
}

const pageRequests = (server: SiteServer) => server.log.filter((entry) => !isProtocolFile(entry.path)).length;

function start(crawlId: string, server: SiteServer, extra: Record<string, unknown> = {}) {
  return stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [
      { crawlId, seeds: [server.url], delayMs: 200, jitterRatio: 0, allowHosts: ['127.0.0.1'], ...extra },
    ],
  });
}

describe('operator control', () => {
  it('pause stops every request until resume', async () => {
    const server = await site(40);
    const handle = await start('control-pause', server, { delayMs: 300 });
    await waitFor(() => pageRequests(server) >= 3, 60_000, '3 pages');
    const paused = await runGleaner(['pause', 'control-pause'], env);
    expect(paused.code, paused.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const atPause = pageRequests(server);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(pageRequests(server)).toBe(atPause);
    const progress = await handle.query(crawlProgressQuery);
    expect(progress.paused).toEqual(['*']);

    const resumed = await runGleaner(['resume', 'control-pause'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = (await handle.result()) as CrawlSummary;
    expect(summary).toMatchObject({ status: 'completed', pagesFetched: 40 });
  });

  it('cancel ends the crawl early, as cancelled', async () => {
    const server = await site(40);
    const handle = await start('control-cancel', server);
    await waitFor(() => pageRequests(server) >= 2, 60_000, '2 pages');
    const cancelled = await runGleaner(['cancel', 'control-cancel', '--reason', 'enough'], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const summary = (await handle.result()) as CrawlSummary;
    expect(summary.status).toBe('cancelled');
    expect(summary.pagesFetched).toBeLessThan(40);
    expect(pageRequests(server)).toBe(summary.pagesFetched);
  });

  it('a control command for an unknown crawl is a one-line error', async () => {
    const result = await runGleaner(['pause', 'no-such-crawl'], env);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('gleaner: no running crawl with id no-such-crawl');
  });
});

describe('page-level robots directives', () => {
  it('stores noindex pages without indexing them, and records but does not follow nofollow links', async () => {
    const server = await serveSite(undefined);
    sites.push(server);
    server.route('/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml('home', ['/hidden', '/quiet']));
    });
    server.route('/hidden', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<html><head><meta name="robots" content="noindex"></head><body><a href="/after-hidden">next</a></body></html>',
        );
    });
    server.route('/quiet', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': 'nofollow' })
        .end(pageHtml('quiet', ['/never']));
    });
    server.route('/after-hidden', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml('after', []));
    });
    const summary = (await (await start('directives', server, { delayMs: 0 })).result()) as CrawlSummary;
    expect(server.log.map((entry) => entry.path)).not.toContain('/never');
    expect(summary).toMatchObject({ pagesFetched: 4, pagesIndexed: 3, noindex: 1 });
    const pages = await stack.db.query<{ path: string; noindex: boolean; indexed: boolean }>(
      `SELECT final_url AS path, noindex, indexed_at IS NOT NULL AS indexed FROM pages WHERE crawl_id = 'directives' ORDER BY final_url`,
    );
    const byPath = Object.fromEntries(pages.rows.map((row) => [new URL(row.path).pathname, row]));
    expect(byPath['/hidden']).toMatchObject({ noindex: true, indexed: false });
    expect(byPath['/quiet']).toMatchObject({ noindex: false, indexed: true });
    const edge = await stack.db.query(
      `SELECT 1 FROM links l JOIN pages p ON p.id = l.from_page_id WHERE p.final_url = $1 AND l.to_url = $2`,
      [`${server.origin}/quiet`, `${server.origin}/never`],
    );
    expect(edge.rows).toHaveLength(1);
  });
});
