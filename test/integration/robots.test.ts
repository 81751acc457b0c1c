/**
 * robots.txt obeyed end to end, proven from each server's own request log: disallowed paths are
 * never requested, Crawl-delay raises the gap, an origin whose robots.txt answers 503 gets
 * nothing but robots.txt requests, and a 404 robots.txt means allow all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { addGeneratedPages } from '../../testbed/generated-site';
import { isProtocolFile, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const ROBOTS = [
  'User-agent: *',
  'Disallow: /page-3.html',
  'Crawl-delay: 0.1',
  '',
  'User-agent: gleaner',
  'Disallow: /page-5.html',
  'Disallow: /private/',
  'Crawl-delay: 0.4',
].join('\n');

let stack: TestStack;
let ruled: SiteServer;
let broken: SiteServer;
let missing: SiteServer;

beforeAll(async () => {
  ruled = await serveSite(undefined);
  broken = await serveSite(undefined);
  missing = await serveSite(undefined);
  addGeneratedPages(ruled, 8, { crossLinks: ['/private/secret.html', '/moved.html'] });
  // An allowed URL that redirects into a disallowed folder: the hop is ruled by robots.txt too.
  ruled.route('/moved.html', (_req, res) => {
    res.writeHead(302, { location: '/private/moved-here.html' }).end();
  });
  ruled.route('/private/moved-here.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>moved secret</p>');
  });
  ruled.route('/private/secret.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>secret</p>');
  });
  ruled.route('/robots.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS);
  });
  addGeneratedPages(broken, 4);
  broken.route('/robots.txt', (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
  });
  addGeneratedPages(missing, 4);
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  for (const site of [ruled, broken, missing]) await site?.close();
});

describe('robots.txt', () => {
  it('is obeyed per origin, from the servers own logs', async () => {
    const crawlId = 'robots-lab';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        {
          crawlId,
          seeds: [ruled.url, broken.url, missing.url],
          delayMs: 0,
          backoffBaseMs: 200,
          allowHosts: ['127.0.0.1'],
        },
      ],
    });

    // The gleaner group applies (our product token), not the * group.
    const ruledPaths = ruled.log.map((entry) => entry.path);
    expect(ruledPaths[0]).toBe('/robots.txt');
    expect(ruledPaths.filter((p) => p === '/robots.txt')).toHaveLength(1);
    expect(ruledPaths).not.toContain('/page-5.html');
    expect(ruledPaths.some((p) => p.startsWith('/private/'))).toBe(false);
    expect(ruledPaths).toContain('/page-3.html');
    const pages = ruled.log
      .filter((entry) => !isProtocolFile(entry.path))
      .sort((a, b) => a.startedAtMs - b.startedAtMs);
    const gaps = pages.slice(1).map((entry, i) => entry.startedAtMs - (pages[i]?.endedAtMs ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(400);

    // 503 for robots.txt: asked again after backoff (3 retries), and nothing else was asked.
    expect(broken.log.length).toBe(4);
    expect(broken.log.every((entry) => entry.path === '/robots.txt')).toBe(true);

    // 404 for robots.txt: allow all.
    expect(missing.log.filter((entry) => !isProtocolFile(entry.path))).toHaveLength(4);

    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(7 + 4); // 8 pages but page-5; 4 from the origin without robots.txt
    // page-5, /private/secret.html, and /moved.html, whose redirect points into /private/
    expect(summary.robotsBlocked).toBe(3);
    expect(ruledPaths).toContain('/moved.html');
    // The 503 origin's seed was never fetched because the origin could not be read, not by a rule.
    expect(summary.unreachable).toBe(1);
    const blocked = await stack.db.query<{ url: string; error: string }>(
      "SELECT url, error FROM fetches WHERE crawl_id = $1 AND outcome = 'robots-blocked' ORDER BY url",
      [crawlId],
    );
    expect(blocked.rows.map((row) => new URL(row.url).pathname)).toEqual([
      '/moved.html',
      '/page-5.html',
      '/private/secret.html',
    ]);
    expect(blocked.rows[0]?.error).toMatch(
      /^redirected to http:\/\/.*\/private\/moved-here\.html, which is disallowed/,
    );
    console.info(`robots: smallest gap ${Math.min(...gaps)} ms, robotsBlocked ${summary.robotsBlocked}`);
  });
});
